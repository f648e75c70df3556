# shellcheck shell=bash disable=SC1091,SC2016,SC2034 # sourced by test/host/al2023/run.sh in the chroot, after lib.sh
# The cache node with a plain nfs4 origin: nfs-utils only.
source "$A/lib/fscache.sh"
load_script "$A/cache-node/bootstrap.sh"
EFSC_ORIGIN_MOUNT_TYPE=nfs4
EFSC_NODE_DISK_CACHE=false
detect_os
mark
install_packages
check "first run: nfs-utils only" dnf_calls_are 'dnf -qy install nfs-utils'
check "no amazon-efs-utils" absent amazon-efs-utils
check "no apt or dpkg command ran" no_apt
mark
source "$A/lib/mirror.sh"
EFSC_MIRROR_PATHS='/efs/app'
install_packages
check "mirrors without the disk cache: rsync and nftables from core, no SPAL" dnf_calls_are 'dnf -qy install rsync nftables'
check "rsync and nft on PATH" commands rsync nft
check "no SPAL for the mirrors (find walks, rsync copies)" absent spal-release
