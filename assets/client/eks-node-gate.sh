#!/bin/bash
set -euo pipefail
# An EKS node's second user-data part (EksFleetNodes), run by cloud-init after the FS-Cache bootstrap's part whatever
# that part's exit status. On Amazon's EKS-optimized Amazon Linux 2023 images, nodeadm-run.service starts containerd
# and the kubelet after cloud-final.service, and is ordered after it, not bound to its success: a node whose cache
# never came up would join the cluster and take pods. The bootstrap's part marks its success (EFSC_READY_FILE, written
# only when its first-boot run returned); without that mark, this part gives nodeadm-run.service a runtime drop-in
# whose condition is the mark and withdraws its pending start, so the node never registers during this boot, and says
# why on the console.
#   eks-node-gate.sh   from cloud-init, once per instance (cloud-init does not run the parts again on a reboot)
# A runtime mask would not do: the image's unit is in /etc/systemd/system, which takes precedence over /run's mask
# (the lab found it); drop-ins of every directory apply.

READY_FILE="${EFSC_READY_FILE:-/run/efs-cache/eks-node-ready}"
UNIT=nodeadm-run.service
DROP_IN="${EFSC_SYSTEMD_RUNTIME_DIR:-/run/systemd/system}/$UNIT.d/50-efs-cache-gate.conf"

say() {
  # The console, where the EC2 console's "Get system log" shows it, and cloud-init's output log.
  printf 'cdk-efs-cache: %s\n' "$*" >&2
  if [ -w /dev/console ]; then printf 'cdk-efs-cache: %s\n' "$*" >/dev/console || true; fi
}

if [ -e "$READY_FILE" ]; then
  say "the FS-Cache bootstrap succeeded: $UNIT starts the kubelet after cloud-init"
  exit 0
fi
say "the FS-Cache bootstrap did not succeed (no $READY_FILE): this node does not join the cluster;" \
  "$UNIT does not start during this boot. Its log: /var/log/cloud-init-output.log"
mkdir -p "$(dirname "$DROP_IN")"
printf '[Unit]\n# cdk-efs-cache: the FS-Cache bootstrap did not succeed (eks-node-gate.sh)\nConditionPathExists=%s\n' "$READY_FILE" >"$DROP_IN"
systemctl daemon-reload
systemctl stop --no-block "$UNIT"
# Check what was asked, not the commands' status alone: systemd must hold the drop-in.
if ! systemctl show -P DropInPaths "$UNIT" | tr ' ' '\n' | grep -qxF "$DROP_IN"; then
  say "systemd does not hold $DROP_IN for $UNIT: the kubelet may still start"
fi
exit 1
