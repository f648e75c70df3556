#!/bin/bash
set -euo pipefail
# An EKS node's second user-data part (EksFleetNodes), run by cloud-init after the FS-Cache bootstrap's part whatever
# that part's exit status. On Amazon's EKS-optimized Amazon Linux 2023 images, nodeadm-run.service starts containerd
# and the kubelet after cloud-final.service, and is ordered after it, not bound to its success: a node whose cache
# never came up would join the cluster and take pods. The bootstrap's part marks its success (EFSC_READY_FILE, written
# only when its first-boot run returned); without that mark, this part masks nodeadm-run.service for this boot and
# withdraws its pending start, so the node never registers, and says why on the console.
#   eks-node-gate.sh   from cloud-init, once per instance (cloud-init does not run the parts again on a reboot)

READY_FILE="${EFSC_READY_FILE:-/run/efs-cache/eks-node-ready}"
UNIT=nodeadm-run.service

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
  "$UNIT is masked for this boot. Its log: /var/log/cloud-init-output.log"
systemctl mask --runtime "$UNIT"
systemctl stop --no-block "$UNIT"
# Check what was asked, not the commands' status alone: the unit must be masked and not running.
state="$(systemctl is-enabled "$UNIT" 2>/dev/null || true)"
if [ "$state" != masked-runtime ] && [ "$state" != masked ]; then
  say "$UNIT is '$state' after masking it: the kubelet may still start"
fi
exit 1
