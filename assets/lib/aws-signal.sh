#!/bin/bash
set -euo pipefail
# AWS only: tells CloudFormation whether this instance's first bootstrap succeeded, so `cdk deploy` waits for a
# node that really serves and fails when one cannot (the reason is in the instance's log). Inert unless
# EFSC_SIGNAL_STACK is set; sends at most one signal per instance (a marker file), so boot-time re-runs stay quiet.
# Loading this file arms nothing: only the first-boot run calls signal_arm. The installed copy of the user data also
# holds this file, and its other modes (a boot unit's --warm, the metrics timer) must never signal: a --warm that
# signalled SUCCESS would write the marker before the node serves, and a later failure would never be reported.
# Needs: common.sh (log, ensure_aws_cli: installs curl and the AWS CLI when missing), cloudformation:SignalResource.

signal_cloudformation() {
  local status="$1" id marker=/var/lib/efs-cache/signalled
  [ -n "${EFSC_SIGNAL_STACK:-}" ] && [ ! -e "$marker" ] || return 0
  [ -n "${EFSC_SIGNAL_RESOURCE:-}" ] || { log "WARN: no resource to signal $status to (no cdk-efs-cache:signal-resource tag?)"; return 0; }
  # In a subshell, whose die is a warning: a failed install must neither end the exit trap nor add a FATAL line to a
  # run whose result is already decided.
  if ! command -v aws >/dev/null || ! command -v curl >/dev/null; then
    # shellcheck disable=SC2317 # die is called by ensure_aws_cli's helpers
    (die() { log "WARN: $*"; exit 1; } && ensure_aws_cli) || { log "WARN: no curl or aws CLI, cannot signal $status"; return 0; }
  fi
  id=$(imds meta-data/instance-id) || { log "WARN: no instance id from the metadata service, cannot signal $status"; return 0; }
  # The CLI retries a throttled call by itself, but only a few times (v2: 3 attempts), and a fleet's nodes signal
  # together: a signal lost to throttling leaves CloudFormation waiting out its timeout with no reason. The same
  # unique id makes a repeated signal harmless.
  if retry 3 10 aws cloudformation signal-resource --region "$EFSC_SIGNAL_REGION" --stack-name "$EFSC_SIGNAL_STACK" \
    --logical-resource-id "$EFSC_SIGNAL_RESOURCE" --unique-id "$id" --status "$status"; then
    mkdir -p "${marker%/*}" && : >"$marker"
    log "signalled $status to $EFSC_SIGNAL_STACK/$EFSC_SIGNAL_RESOURCE"
  else
    log "WARN: could not signal $status to CloudFormation"
  fi
}

# signal_on_exit STATUS: the on-exit function (common.sh's on_exit) that signals how the run ended.
signal_on_exit() {
  if [ "$1" -eq 0 ]; then signal_cloudformation SUCCESS; else
    signal_cloudformation FAILURE
    # An elastic fleet's group replaces a node that will not serve now rather than at the launch hook's timeout.
    lifecycle_complete "${EFSC_LIFECYCLE_LAUNCH_HOOK:-}" ABANDON || log "WARN: could not abandon the launch hook"
  fi
}

# signal_arm: from here on, the exit of this run signals SUCCESS (status 0) or FAILURE. Call it from a first-boot run
# only, before its parameter checks, so that bad parameters are signalled too.
signal_arm() {
  if [ -n "${EFSC_SIGNAL_STACK:-}" ]; then on_exit signal_on_exit; fi
}

# lifecycle_complete HOOK RESULT (AWS only, an elastic fleet's node): completes this instance's lifecycle action of
# its group's hook HOOK with RESULT (CONTINUE or ABANDON): the launch hook once the node serves, so the group puts it
# in service and registers it with the load balancer only then; the terminate hook once it stopped serving. Inert
# when HOOK is empty (a fixed fleet). The group is the instance's aws:autoscaling:groupName tag (instance metadata
# tags on). Needs autoscaling:CompleteLifecycleAction on the group (granted on groups tagged with the fleet).
lifecycle_complete() {
  local hook="$1" result="$2" id group
  [ -n "$hook" ] || return 0
  # shellcheck disable=SC2317 # die is called by ensure_aws_cli's helpers
  command -v aws >/dev/null || (die() { log "WARN: $*"; exit 1; } && ensure_aws_cli) || return 1
  { id=$(imds meta-data/instance-id) && group=$(imds meta-data/tags/instance/aws:autoscaling:groupName); } ||
    { log "WARN: no instance id or group name from the metadata service"; return 1; }
  retry 3 10 aws autoscaling complete-lifecycle-action --region "$EFSC_SIGNAL_REGION" --auto-scaling-group-name "$group" \
    --lifecycle-hook-name "$hook" --instance-id "$id" --lifecycle-action-result "$result" || return 1
  log "completed the lifecycle action of $hook with $result"
}
