#!/bin/bash
set -euo pipefail
# The loader of the user data that lib/bootstrap renders. The code of a script and its libraries is not in the user
# data but in one S3 object (a CDK file asset), so that EC2's 16 KB bound neither the features nor the commands users
# add. The user data holds the EFSC_* parameters, this loader and the object's sha256, known at synth. The loader
# fetches the object with the instance role's session (the aws CLI, which takes it from the metadata service), keeps it
# in /var/lib/efs-cache/code and evaluates it only when its sha256 is the one rendered: whatever the bucket holds or
# a deploy-time value names, nothing else runs. A later run of the installed user data (the boot units' modes) uses the
# kept copy and needs no S3. lib/bootstrap inlines this file after the parameters and evaluates efs_cache_code after it.
#   EFSC_CODE_BUCKET  the object's bucket (the stack's file assets bucket)
#   EFSC_CODE_KEY     its key
#   EFSC_CODE_REGION  the bucket's region (the stack's)
#   EFSC_CODE_SHA256  the sha256 of the code, lowercase hex
# When the code cannot run (no CLI, no fetch, a tampered object), a first boot that reports to CloudFormation (a
# fleet's node, the seeder: EFSC_SIGNAL_STACK) signals FAILURE at once, and an elastic node abandons its launch hook
# (EFSC_LIFECYCLE_LAUNCH_HOOK), so that the deploy fails within minutes instead of waiting out its timeout. Those two
# calls are signed here with curl and openssl (AWS Signature Version 4), since the aws CLI may be what is missing.
#   EFSC_SIGNAL_STACK, EFSC_SIGNAL_REGION, EFSC_SIGNAL_RESOURCE (or the instance's cdk-efs-cache:signal-resource tag)
# shellcheck disable=SC2154 # the EFSC_CODE_* parameters are the user data's header

# The user data's own argument: none on the first boot, a mode (--warm, --boot...) for the installed copy's runs.
efs_cache_mode="${1:-}"

# efs_cache_fail REASON: the loader's FATAL line (common.sh's log is part of the code it loads), then the report.
efs_cache_fail() {
  printf 'efs-cache: FATAL: %s\n' "$*" >&2
  logger -t efs-cache -- "FATAL: $*" 2>/dev/null || true
  if [ -z "$efs_cache_mode" ] && [ -n "${EFSC_SIGNAL_STACK:-}" ]; then efs_cache_report || true; fi
  exit 1
}

# efs_cache_imds PATH: the metadata service's answer (IMDSv2).
efs_cache_imds() {
  local t
  t=$(curl -fsS -m 5 -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' http://169.254.169.254/latest/api/token) &&
    curl -fsS -m 5 -H "X-aws-ec2-metadata-token: $t" "http://169.254.169.254/latest/$1"
}

# efs_cache_h [-mac HMAC -macopt KEY] < DATA: DATA's sha256, or its HMAC-SHA256 with KEY, in hex.
efs_cache_h() { openssl dgst -sha256 "$@" | sed 's/^.* //'; }

# efs_cache_call SERVICE BODY: POSTs BODY, a form of an AWS Query API, to https://SERVICE.REGION.amazonaws.com/,
# signed (SigV4) with the instance role's session from the metadata service. Succeeds on an HTTP 2xx. BODY is sent as
# given: its values (names of stacks, resources, groups and hooks, an instance id) need no percent-encoding.
efs_cache_call() {
  local s="$1" b="$2" r c a k t d h x A S T g='content-type;host;x-amz-date;x-amz-security-token'
  r=$(efs_cache_imds meta-data/iam/security-credentials/) && c=$(efs_cache_imds "meta-data/iam/security-credentials/$r" | tr -d '\n') || return 1
  for x in AccessKeyId SecretAccessKey Token; do
    [[ "$c" =~ \"$x\"\ *:\ *\"([^\"]*)\" ]] || return 1
    printf -v "${x:0:1}" %s "${BASH_REMATCH[1]}"
  done
  a=$A k=$S t=$T d=$(date -u +%Y%m%dT%H%M%SZ) x=amazonaws.com
  case "$EFSC_SIGNAL_REGION" in cn-*) x+=.cn ;; esac
  h="$s.$EFSC_SIGNAL_REGION.$x"
  c="${d%T*}/$EFSC_SIGNAL_REGION/$s/aws4_request"
  r=$(printf 'POST\n/\n\ncontent-type:application/x-www-form-urlencoded\nhost:%s\nx-amz-date:%s\nx-amz-security-token:%s\n\n%s\n%s' \
    "$h" "$d" "$t" "$g" "$(printf %s "$b" | efs_cache_h)" | efs_cache_h)
  k=$(printf %s "${d%T*}" | efs_cache_h -mac HMAC -macopt "key:AWS4$k")
  for x in "$EFSC_SIGNAL_REGION" "$s" aws4_request "AWS4-HMAC-SHA256"$'\n'"$d"$'\n'"$c"$'\n'"$r"; do
    k=$(printf %s "$x" | efs_cache_h -mac HMAC -macopt "hexkey:$k")
  done
  curl -fsS -m 20 -o /dev/null -A efs-cache-loader "https://$h/" --data-binary "$b" -H "x-amz-date: $d" \
    -H 'content-type: application/x-www-form-urlencoded' -H "x-amz-security-token: $t" \
    -H "authorization: AWS4-HMAC-SHA256 Credential=$a/$c, SignedHeaders=$g, Signature=$k"
}

# efs_cache_report: FAILURE to CloudFormation for this instance (once: the scripts' marker) and ABANDON of an elastic
# node's launch hook, three tries each, 5 s apart; says what it did or could not do.
efs_cache_report() {
  local i r m=/var/lib/efs-cache/signalled
  [ ! -e "$m" ] || return 0
  if ! command -v curl >/dev/null || ! command -v openssl >/dev/null || ! i=$(efs_cache_imds meta-data/instance-id); then
    printf 'efs-cache: WARN: cannot signal FAILURE (no curl, openssl or instance id)\n' >&2
    return 1
  fi
  r="${EFSC_SIGNAL_RESOURCE:-$(efs_cache_imds meta-data/tags/instance/cdk-efs-cache:signal-resource || true)}"
  if efs_cache_try cloudformation "Action=SignalResource&Version=2010-05-15&StackName=$EFSC_SIGNAL_STACK&LogicalResourceId=$r&UniqueId=$i&Status=FAILURE"; then
    mkdir -p "${m%/*}" && : >"$m"
    printf 'efs-cache: signalled FAILURE to %s/%s\n' "$EFSC_SIGNAL_STACK" "$r" >&2
  fi
  [ -z "${EFSC_LIFECYCLE_LAUNCH_HOOK:-}" ] || ! r=$(efs_cache_imds meta-data/tags/instance/aws:autoscaling:groupName) ||
    ! efs_cache_try autoscaling "Action=CompleteLifecycleAction&Version=2011-01-01&AutoScalingGroupName=$r&LifecycleHookName=$EFSC_LIFECYCLE_LAUNCH_HOOK&InstanceId=$i&LifecycleActionResult=ABANDON" ||
    printf 'efs-cache: abandoned the launch hook\n' >&2
}

# efs_cache_try SERVICE BODY: efs_cache_call, three tries 5 s apart; a WARN line when all failed.
efs_cache_try() {
  efs_cache_call "$@" || { sleep 5 && efs_cache_call "$@"; } || { sleep 5 && efs_cache_call "$@"; } ||
    { printf 'efs-cache: WARN: %s refused or did not answer: %s\n' "$1" "${2%%&*}" >&2; return 1; }
}

# efs_cache_install PACKAGE: the aws CLI's package, with the scripts' own patience: three tries 10 s apart, apt waiting
# up to 5 minutes for another apt's lock (cloud-init's or unattended-upgrades' on a first boot).
efs_cache_install() {
  local i o='-qy -o DPkg::Lock::Timeout=300'
  for i in 1 2 3; do
    [ "$i" = 1 ] || sleep 10
    if command -v dnf >/dev/null; then
      dnf -qy install "$1" >&2 && return 0
    else
      # shellcheck disable=SC2086 # $o holds several options
      { apt-get $o update && DEBIAN_FRONTEND=noninteractive apt-get $o install --no-install-recommends "$1"; } >&2 && return 0
    fi
  done
  return 1
}

# efs_cache_load: sets efs_cache_code to the verified code, fetched once.
efs_cache_load() {
  local want="$EFSC_CODE_SHA256" dir=/var/lib/efs-cache/code file tmp i err=''
  [[ "$want" =~ ^[0-9a-f]{64}$ ]] || efs_cache_fail "EFSC_CODE_SHA256='$want' is not a sha256"
  [[ "$EFSC_CODE_KEY" =~ ^[A-Za-z0-9._/-]+$ ]] || efs_cache_fail "EFSC_CODE_KEY='$EFSC_CODE_KEY' is not an asset key"
  file="$dir/$want.sh"
  if ! [ -f "$file" ] || [ "$(sha256sum <"$file")" != "$want  -" ]; then
    if ! command -v aws >/dev/null; then
      if command -v dnf >/dev/null; then
        efs_cache_install awscli-2 || efs_cache_fail "cannot install awscli-2 to fetch the bootstrap code"
      else
        efs_cache_install awscli || efs_cache_fail "cannot install awscli to fetch the bootstrap code (an image whose" \
          "archive has no awscli package must bring the aws CLI v2 itself)"
      fi
    fi
    { mkdir -p "$dir" && chmod 0700 "$dir"; } || efs_cache_fail "cannot create $dir"
    tmp=$(mktemp "$file.XXXXXX") || efs_cache_fail "cannot write in $dir"
    # The role's session can take seconds to reach a new instance, and the network a while to come up: 12 tries, 5 s
    # apart (about a minute) before the run fails. A subnet with no route to S3 drops the connection's packets: each
    # connect gives up after 5 s (the CLI's own is 60 s, and it tries 3 times), so the run fails in minutes, not 36.
    for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
      if err=$(aws s3api get-object --region "$EFSC_CODE_REGION" --bucket "$EFSC_CODE_BUCKET" --key "$EFSC_CODE_KEY" \
        --cli-connect-timeout 5 "$tmp" 2>&1 >/dev/null); then
        err=''
        break
      fi
      [ "$i" -eq 12 ] || sleep 5
    done
    if [ -n "$err" ]; then
      rm -f "$tmp"
      efs_cache_fail "cannot fetch the bootstrap code s3://$EFSC_CODE_BUCKET/$EFSC_CODE_KEY (the instance role needs" \
        "s3:GetObject on it, and the subnet a route to S3): ${err//$'\n'/ }"
    fi
    if [ "$(sha256sum <"$tmp")" != "$want  -" ]; then
      rm -f "$tmp"
      efs_cache_fail "s3://$EFSC_CODE_BUCKET/$EFSC_CODE_KEY is not the code this user data was rendered with" \
        "(its sha256 is not $want): refusing to run it"
    fi
    mv -f "$tmp" "$file"
  fi
  # shellcheck disable=SC2034 # the user data evaluates it after this file
  efs_cache_code=$(cat "$file") || efs_cache_fail "cannot read $file"
}
efs_cache_load
