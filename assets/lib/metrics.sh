#!/bin/bash
set -euo pipefail
# On-instance metrics (the contract: lib/monitoring/metrics.ts). The CloudWatch agent publishes them: it listens for
# StatsD on 127.0.0.1:8125 and sends what it aggregated every 60 s to namespace CdkEfsCache. A oneshot collector
# (efs-cache-metrics.timer, every minute: "<installed script> --metrics") reads /proc and sends one datagram of StatsD
# lines, each tagged Group:EFSC_METRICS_GROUP; counters are deltas since its last run (state in /run). What it reads
# is the caller's metrics_read.
#   EFSC_METRICS        cloudwatch-agent, or off (nothing installed)
#   EFSC_METRICS_GROUP  the Group dimension (the construct path of the fleet or client template; may be empty when off)
# Needs common.sh. Setting up metrics never fails a bootstrap: it warns.

metrics_check() {
  need EFSC_METRICS '^(cloudwatch-agent|off)$' 'cloudwatch-agent or off'
  need EFSC_METRICS_GROUP '^[A-Za-z0-9/_.-]*$' 'a construct path'
}

# metrics_setup: the collector ("$SELF --metrics", every minute) and the agent's configuration. The agent is installed
# (dnf: it is in Amazon Linux 2023's core repository) and started only where it can be; elsewhere the rest is still
# installed, and a warning says that nothing is published.
metrics_setup() {
  [ "$EFSC_METRICS" = off ] || (metrics_install) || warn "metrics not set up"
}

# The agent's defaults: the statsd input flushed every 10 s and published as 60 s aggregates. omit_hostname: no host
# dimension, so every instance of a group adds to the same series. The agent is (re)configured when this file changes.
metrics_install() {
  local d=/opt/aws/amazon-cloudwatch-agent c
  c=$d/bin/amazon-cloudwatch-agent-ctl
  put_unit efs-cache-metrics.service <<EOF
[Service]
Type=oneshot
ExecStart=$SELF --metrics
EOF
  put_unit efs-cache-metrics.timer <<EOF
[Timer]
OnCalendar=minutely
[Install]
WantedBy=timers.target
EOF
  systemd_ctl enable -q --now efs-cache-metrics.timer || return 1
  if [ "$OS_PKG" = dnf ] && ! pkg_installed amazon-cloudwatch-agent; then
    retry 3 10 dnf -qy install amazon-cloudwatch-agent || return 1
  fi
  put_file $d/etc/efs-cache.json 0644 <<'EOF' || return 0
{"agent":{"omit_hostname":true},"metrics":{"namespace":"CdkEfsCache","metrics_collected":{"statsd":{"service_address":"127.0.0.1:8125"}}}}
EOF
  if [ -x $c ]; then $c -a fetch-config -s -c file:$d/etc/efs-cache.json; else warn "no CloudWatch agent: metrics not published"; fi
}

# One run of the collector. metrics_read (the caller's) prints "NAME c|g VALUE": c a counter's running total, g a
# gauge. A counter sends its delta since the last run: none on the first run, or when it went back (a restart).
metrics_collect() {
  local f=/run/efs-cache-metrics n t v st=() s=
  declare -A prev=()
  if [ -f $f ]; then while read -r n v; do prev[${n:-_}]=$v; done <$f; fi
  while read -r n t v; do
    if [ "$t" = c ]; then
      st+=("$n $v")
      if [ -z "${prev[$n]:-}" ] || [ "$v" -lt "${prev[$n]}" ]; then continue; fi
      v=$((v - prev[$n]))
    fi
    s+="$n:$v|$t|#Group:$EFSC_METRICS_GROUP"$'\n'
  done < <(metrics_read)
  printf '%s\n' "${st[@]}" >$f
  printf %s "$s" >/dev/udp/127.0.0.1/8125 || warn "no StatsD listener"
}
