# shellcheck shell=bash disable=SC1091,SC2016,SC2034 # sourced by test/host/al2023/run.sh in the chroot, after lib.sh
# metrics_install (assets/lib/metrics.sh) on dnf: the CloudWatch agent from core, then its configuration loaded with
# the agent's ctl. systemctl is a stub here.
source "$A/lib/metrics.sh"
SELF=/usr/local/lib/efs-cache/client.sh EFSC_METRICS=cloudwatch-agent EFSC_METRICS_GROUP=Test/Clients
detect_os
mark
out="$( (metrics_install) 2>&1)" && s=0 || s=$?
check "metrics_install succeeded" [ "$s" = 0 ]
check "first run: dnf -qy install amazon-cloudwatch-agent" dnf_calls_are 'dnf -qy install amazon-cloudwatch-agent'
check "the agent's ctl loaded the configuration" grep -qx \
  'amazon-cloudwatch-agent-ctl -a fetch-config -s -c file:/opt/aws/amazon-cloudwatch-agent/etc/efs-cache.json' \
  /var/log/stand-in-calls.log
check "no warning that nothing is published" bash -c '! grep -q "no CloudWatch agent" <<<"$1"' _ "$out"
mark
(metrics_install) 2>/dev/null
check "second run calls no dnf" no_dnf_or_rpm_install
check "no apt or dpkg command ran" no_apt
