# shellcheck shell=bash disable=SC1091,SC2016,SC2034 # sourced by test/host/al2023/run.sh in the chroot, after lib.sh
# The client's packages with mount type efs: amazon-efs-utils from core as well.
source "$A/lib/metrics.sh"
source "$A/lib/fscache.sh"
load_script "$A/client/bootstrap.sh"
EFSC_MOUNT_TYPE=efs
detect_os
mark
install_packages
check "first run: spal-release, the rest, then amazon-efs-utils" dnf_calls_are \
  'dnf -qy install spal-release' 'dnf -qy install mdadm e2fsprogs cachefilesd nfs-utils' \
  'dnf -qy install amazon-efs-utils'
check "amazon-efs-utils installed, mount.efs on PATH" eval 'installed amazon-efs-utils && commands mount.efs'
mark
install_packages
check "second run calls no dnf" no_dnf_or_rpm_install
check "no apt or dpkg command ran" no_apt
