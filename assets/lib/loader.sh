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
# shellcheck disable=SC2154 # the EFSC_CODE_* parameters are the user data's header

# efs_cache_fail REASON: the loader's FATAL line (common.sh's log is part of the code it loads).
efs_cache_fail() {
  printf 'efs-cache: FATAL: %s\n' "$*" >&2
  logger -t efs-cache -- "FATAL: $*" 2>/dev/null || true
  exit 1
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
        dnf -qy install awscli-2 >&2 || efs_cache_fail "cannot install awscli-2 to fetch the bootstrap code"
      else
        { apt-get -qy update && apt-get -qy install --no-install-recommends awscli; } >&2 ||
          efs_cache_fail "cannot install awscli to fetch the bootstrap code"
      fi
    fi
    { mkdir -p "$dir" && chmod 0700 "$dir"; } || efs_cache_fail "cannot create $dir"
    tmp=$(mktemp "$file.XXXXXX") || efs_cache_fail "cannot write in $dir"
    # The role's session can take seconds to reach a new instance, and the network a while to come up: 12 tries.
    for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
      if err=$(aws s3api get-object --region "$EFSC_CODE_REGION" --bucket "$EFSC_CODE_BUCKET" --key "$EFSC_CODE_KEY" \
        "$tmp" 2>&1 >/dev/null); then
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
