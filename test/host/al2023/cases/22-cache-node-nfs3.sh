# shellcheck shell=bash disable=SC1091,SC2016,SC2034 # sourced by test/host/al2023/run.sh in the chroot, after lib.sh
# The cache node over an NFSv3 server (CacheOrigin.nfsServer: mount type nfs): nfs-utils only, no amazon-efs-utils.
source "$A/lib/fscache.sh"
load_script "$A/cache-node/bootstrap.sh"
EFSC_ORIGIN_MOUNT_TYPE=nfs
EFSC_NODE_DISK_CACHE=false
EFSC_MIRROR_PATHS=''
detect_os
mark
install_packages
check "first run: nfs-utils only" dnf_calls_are 'dnf -qy install nfs-utils'
check "no amazon-efs-utils" absent amazon-efs-utils
check "mount.nfs (NFSv3) and exportfs on PATH" commands mount.nfs exportfs
check "no apt or dpkg command ran" no_apt
