# shellcheck shell=bash disable=SC1091,SC2016,SC2034 # sourced by test/host/al2023/run.sh in the chroot, after lib.sh
# The client's packages (assets/client/bootstrap.sh install_packages), mounting EFS or the fleet with plain nfs4.
source "$A/lib/metrics.sh"
source "$A/lib/fscache.sh"
load_script "$A/client/bootstrap.sh"
EFSC_MOUNT_TYPE=nfs4
detect_os
mark
install_packages
check "first run: spal-release, then the rest in one dnf call" dnf_calls_are \
  'dnf -qy install spal-release' 'dnf -qy install mdadm e2fsprogs cachefilesd nfs-utils'
check "spal-release, mdadm, e2fsprogs, cachefilesd, nfs-utils installed" \
  installed spal-release mdadm e2fsprogs cachefilesd nfs-utils
check "SPAL's repository file is in place" test -f /etc/yum.repos.d/spal.repo
check "mdadm, mkfs.ext4, cachefilesd, mount.nfs4 on PATH" commands mdadm mkfs.ext4 cachefilesd mount.nfs4
check "no efs-utils for an nfs4 mount" absent amazon-efs-utils
mark
install_packages
check "second run calls no dnf (rpm -q only)" no_dnf_or_rpm_install
check "second run asked rpm about each of its five packages" [ "$(rpm_queries_since_mark)" = 5 ]
check "no apt or dpkg command ran" no_apt
