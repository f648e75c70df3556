# shellcheck shell=bash disable=SC1091,SC2016,SC2034 # sourced by test/host/al2023/run.sh in the chroot, after lib.sh
# label_cache_dir with SELinux reported enabled: it installs policycoreutils-python-utils for semanage and adds the
# rule. selinuxenabled, matchpathcon and restorecon are stubs here (no SELinux in a chroot), so the function's last
# check, the label of the directory, fails as it must where nothing labels it.
source "$A/lib/fscache.sh"
load_script "$A/client/bootstrap.sh"
printf '#!/bin/sh\nexit 0\n' >/opt/t/bin/selinuxenabled
printf '#!/bin/sh\necho "$2 system_u:object_r:var_t:s0"\n' >/opt/t/bin/matchpathcon
printf '#!/bin/sh\necho "restorecon $*" >>%s\n' "$CALLS" >/opt/t/bin/restorecon
chmod 755 /opt/t/bin/*
EFSC_CACHE_DIR=/var/cache/fscache
mkdir -p "$EFSC_CACHE_DIR"
mark
out="$( (label_cache_dir) 2>&1)" || true
check "semanage came from policycoreutils-python-utils (one dnf call)" dnf_calls_are \
  'dnf -qy install policycoreutils-python-utils'
check "policycoreutils-python-utils installed, semanage on PATH" eval 'installed policycoreutils-python-utils && commands semanage'
check "semanage ran with the cache directory's rule" \
  grep -qx 'semanage fcontext -a -t cachefiles_var_t /var/cache/fscache(/.\*)?' /var/log/stand-in-calls.log
check "an unlabelled directory still fails the run" grep -q 'FATAL: /var/cache/fscache is not labelled cachefiles_var_t' <<<"$out"
check "no apt or dpkg command ran" no_apt
