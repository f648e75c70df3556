#!/bin/bash
set -euo pipefail
# Sourced by a script run from a checkout (the tests' host runs), which then has what its user data's code holds
# before it: every library, in the order of LIBRARIES (lib/instance/user-data.ts). EFS_CACHE_LIB lists them for
# install_self, which adds them to the copy it installs. An instance never reads this file.
EFS_CACHE_LIB=""
for efs_cache_lib in common aws-signal metrics fscache mirror mirror-storage mirror-sync mirror-nfsd mirror-metrics mirror-s3; do
  EFS_CACHE_LIB+="${EFS_CACHE_LIB:+:}$(dirname "${BASH_SOURCE[0]}")/$efs_cache_lib.sh"
done
# The awk programs (lib/awk/NAME.awk) as the code holds them: each the here-document of a function efs_cache_awk_NAME
# (- as _), which install_self adds to the copy it installs.
for efs_cache_lib in "$(dirname "${BASH_SOURCE[0]}")"/awk/*.awk; do
  efs_cache_awk=${efs_cache_lib##*/}
  efs_cache_awk=${efs_cache_awk%.awk}
  eval "efs_cache_awk_${efs_cache_awk//-/_}() {
  cat <<'EFS_CACHE_AWK'
$(cat "$efs_cache_lib")
EFS_CACHE_AWK
}"
done
unset efs_cache_lib efs_cache_awk
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source-path=SCRIPTDIR source=aws-signal.sh
source "$(dirname "${BASH_SOURCE[0]}")/aws-signal.sh"
# shellcheck source-path=SCRIPTDIR source=metrics.sh
source "$(dirname "${BASH_SOURCE[0]}")/metrics.sh"
# shellcheck source-path=SCRIPTDIR source=fscache.sh
source "$(dirname "${BASH_SOURCE[0]}")/fscache.sh"
# shellcheck source-path=SCRIPTDIR source=mirror.sh
source "$(dirname "${BASH_SOURCE[0]}")/mirror.sh"
# shellcheck source-path=SCRIPTDIR source=mirror-storage.sh
source "$(dirname "${BASH_SOURCE[0]}")/mirror-storage.sh"
# shellcheck source-path=SCRIPTDIR source=mirror-sync.sh
source "$(dirname "${BASH_SOURCE[0]}")/mirror-sync.sh"
# shellcheck source-path=SCRIPTDIR source=mirror-nfsd.sh
source "$(dirname "${BASH_SOURCE[0]}")/mirror-nfsd.sh"
# shellcheck source-path=SCRIPTDIR source=mirror-metrics.sh
source "$(dirname "${BASH_SOURCE[0]}")/mirror-metrics.sh"
# shellcheck source-path=SCRIPTDIR source=mirror-s3.sh
source "$(dirname "${BASH_SOURCE[0]}")/mirror-s3.sh"
