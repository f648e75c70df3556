#!/bin/bash
set -euo pipefail
# The loader of the user data that lib/instance/user-data.ts renders. The code of a script and its libraries is not in the user
# data but in one S3 object (a CDK file asset), so that EC2's 16 KB bound neither the features nor the commands users
# add. The user data holds the EFSC_* parameters, this loader and the object's sha256, known at synth. The loader
# fetches the object with the instance role's session (the aws CLI, which takes it from the metadata service), keeps it
# in /var/lib/efs-cache/code and evaluates it only when its sha256 is the one rendered: whatever the bucket holds or
# a deploy-time value names, nothing else runs. A later run of the installed user data (the boot units' modes) uses the
# kept copy and needs no S3. lib/instance/user-data.ts inlines this file after the parameters and evaluates efs_cache_code after it.
#   EFSC_CODE_BUCKET  the object's bucket (the stack's file assets bucket)
#   EFSC_CODE_KEY     its key
#   EFSC_CODE_REGION  the bucket's region (the stack's)
#   EFSC_CODE_SHA256  the sha256 of the code, lowercase hex
# When the code cannot run (no CLI, no fetch, a tampered object), a first boot that reports to CloudFormation (a
# fleet's node, the seeder: EFSC_SIGNAL_STACK) signals FAILURE at once, and an elastic node abandons its launch hook
# (EFSC_LIFECYCLE_LAUNCH_HOOK), so that the deploy fails within minutes instead of waiting out its timeout. Those two
# calls are signed here with Python's standard library (AWS Signature Version 4), since the aws CLI may be what is
# missing.
#   EFSC_SIGNAL_STACK, EFSC_SIGNAL_REGION, EFSC_SIGNAL_RESOURCE (or the instance's cdk-efs-cache:signal-resource tag)
# The EFSC_CODE_* parameters are the user data's header. (The reasons of this file's shellcheck directives are on the
# line above each: the directives are kept in the user data, where every byte counts, and their reasons are not.)
# shellcheck disable=SC2154

# The user data's own argument: none on the first boot, a mode (--warm, --boot...) for the installed copy's runs.
efs_cache_mode="${1:-}"

# efs_cache_fail REASON: the loader's FATAL line (common.sh's log is part of the code it loads), then the report.
efs_cache_fail() {
  printf 'efs-cache: FATAL: %s\n' "$*" >&2
  logger -t efs-cache -- "FATAL: $*" 2>/dev/null || true
  if [ -z "$efs_cache_mode" ] && [ -n "${EFSC_SIGNAL_STACK:-}" ]; then efs_cache_report || true; fi
  exit 1
}

# efs_cache_aws imds PATH: the metadata service's answer (IMDSv2).
# efs_cache_aws call SERVICE BODY: POSTs BODY, a form of an AWS Query API, to https://SERVICE.REGION.amazonaws.com/,
# signed (SigV4) with the instance role's session from the metadata service. Succeeds on an HTTP 2xx. BODY is sent as
# given: its values (names of stacks, resources, groups and hooks, an instance id) need no percent-encoding.
# Python's standard library: every image that runs user data has python3 (cloud-init is Python), while curl and the
# openssl command are missing from minimal images. Its program is indented by two spaces: the user data keeps it whole.
efs_cache_aws() {
  python3 - "$@" "${EFSC_SIGNAL_REGION:-}" <<'EOF'
import hashlib, hmac, json, sys, time, urllib.request as u
def get(url, headers, method='GET', data=None, timeout=5):
  return u.urlopen(u.Request(url, data, headers, method=method), timeout=timeout).read().decode()
def imds(p):
  t = get('http://169.254.169.254/latest/api/token', {'X-aws-ec2-metadata-token-ttl-seconds': '60'}, 'PUT')
  return get('http://169.254.169.254/latest/' + p, {'X-aws-ec2-metadata-token': t})
def call(s, b, r):
  c = json.loads(imds('meta-data/iam/security-credentials/' + imds('meta-data/iam/security-credentials/').split()[0]))
  d, sha = time.strftime('%Y%m%dT%H%M%SZ', time.gmtime()), lambda v: hashlib.sha256(v.encode()).hexdigest()
  host = '%s.%s.amazonaws.com%s' % (s, r, '.cn' if r.startswith('cn-') else '')
  h = {'content-type': 'application/x-www-form-urlencoded', 'host': host, 'x-amz-date': d, 'x-amz-security-token': c['Token']}
  names, scope = ';'.join(sorted(h)), '%s/%s/%s/aws4_request' % (d[:8], r, s)
  req = 'POST\n/\n\n%s\n%s\n%s' % (''.join('%s:%s\n' % (k, h[k]) for k in sorted(h)), names, sha(b))
  k = ('AWS4' + c['SecretAccessKey']).encode()
  for v in (d[:8], r, s, 'aws4_request', 'AWS4-HMAC-SHA256\n%s\n%s\n%s' % (d, scope, sha(req))):
    k = hmac.new(k, v.encode(), hashlib.sha256).digest()
  h['authorization'] = 'AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s' % (c['AccessKeyId'], scope, names, k.hex())
  h['user-agent'] = 'efs-cache-loader'
  get('https://%s/' % host, h, 'POST', b.encode(), 20)
try:
  print(imds(sys.argv[2])) if sys.argv[1] == 'imds' else call(*sys.argv[2:5])
except Exception as e:
  sys.exit('efs-cache: %s %s: %s' % (sys.argv[1], sys.argv[2], e))
EOF
}

# efs_cache_report: FAILURE to CloudFormation for this instance (once: the scripts' marker) and ABANDON of an elastic
# node's launch hook, three tries each, 5 s apart; says what it did or could not do.
efs_cache_report() {
  local i r m=/var/lib/efs-cache/signalled
  [ ! -e "$m" ] || return 0
  if ! command -v python3 >/dev/null || ! i=$(efs_cache_aws imds meta-data/instance-id); then
    printf 'efs-cache: WARN: cannot signal FAILURE (no python3, or no instance id from the metadata service)\n' >&2
    return 1
  fi
  r="${EFSC_SIGNAL_RESOURCE:-$(efs_cache_aws imds meta-data/tags/instance/cdk-efs-cache:signal-resource || true)}"
  if efs_cache_try cloudformation "Action=SignalResource&Version=2010-05-15&StackName=$EFSC_SIGNAL_STACK&LogicalResourceId=$r&UniqueId=$i&Status=FAILURE"; then
    mkdir -p "${m%/*}" && : >"$m"
    printf 'efs-cache: signalled FAILURE to %s/%s\n' "$EFSC_SIGNAL_STACK" "$r" >&2
  fi
  [ -z "${EFSC_LIFECYCLE_LAUNCH_HOOK:-}" ] || ! r=$(efs_cache_aws imds meta-data/tags/instance/aws:autoscaling:groupName) ||
    ! efs_cache_try autoscaling "Action=CompleteLifecycleAction&Version=2011-01-01&AutoScalingGroupName=$r&LifecycleHookName=$EFSC_LIFECYCLE_LAUNCH_HOOK&InstanceId=$i&LifecycleActionResult=ABANDON" ||
    printf 'efs-cache: abandoned the launch hook\n' >&2
}

# efs_cache_try SERVICE BODY: efs_cache_aws call, three tries 5 s apart; a WARN line when all failed.
efs_cache_try() {
  efs_cache_aws call "$@" || { sleep 5 && efs_cache_aws call "$@"; } || { sleep 5 && efs_cache_aws call "$@"; } ||
    { printf 'efs-cache: WARN: %s refused or did not answer: %s\n' "$1" "${2%%&*}" >&2; return 1; }
}

# efs_cache_install PACKAGE: the aws CLI's package, with the scripts' own patience: three tries 10 s apart, apt waiting
# up to 5 minutes for another apt's lock (cloud-init's or unattended-upgrades' on a first boot), all of it within 10
# minutes: each command gets what is left of them, so a repository whose packets go nowhere cannot hold the boot past
# the signal timeout (20 minutes by default) before the loader signals FAILURE.
efs_cache_install() {
  local i o='-qy -o DPkg::Lock::Timeout=300' end=$((SECONDS+600))
  for i in 1 2 3; do
    [ "$i" = 1 ] || sleep 10
    ((end-SECONDS>10)) || return 1
    if command -v dnf >/dev/null; then
      timeout -k 10 $((end-SECONDS)) dnf -qy install "$1" >&2 && return 0
    else
      # $o holds several options.
      # shellcheck disable=SC2086
      { timeout -k 10 $((end-SECONDS)) apt-get $o update &&
        DEBIAN_FRONTEND=noninteractive timeout -k 10 $((end-SECONDS)) apt-get $o install --no-install-recommends "$1"; } >&2 &&
        return 0
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
        efs_cache_install awscli || efs_cache_fail "cannot install awscli to fetch the bootstrap code (bring the aws CLI v2 in the image)"
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
  # The user data evaluates it after this file.
  # shellcheck disable=SC2034
  efs_cache_code=$(cat "$file") || efs_cache_fail "cannot read $file"
}
efs_cache_load
