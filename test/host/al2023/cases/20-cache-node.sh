# shellcheck shell=bash disable=SC1091,SC2016,SC2034 # sourced by test/host/al2023/run.sh in the chroot, after lib.sh
# The cache node's packages (assets/cache-node/bootstrap.sh install_packages, origin mounted with efs-utils) and the
# aws CLI its stable interface needs (common.sh ensure_aws_cli).
# shellcheck source=/dev/null
source "$A/lib/mirror.sh"
source "$A/lib/fscache.sh"
load_script "$A/cache-node/bootstrap.sh"
EFSC_ORIGIN_MOUNT_TYPE=efs
EFSC_NODE_DISK_CACHE=false
EFSC_MIRROR_PATHS=''
detect_os
mark
install_packages
ensure_aws_cli
check "first run: nfs-utils, amazon-efs-utils, curl-minimal, awscli-2" dnf_calls_are \
  'dnf -qy install nfs-utils' 'dnf -qy install amazon-efs-utils' 'dnf -qy install curl-minimal' 'dnf -qy install awscli-2'
check "no SPAL on a cache node" absent spal-release
check "exportfs, nfsconf, mount.nfs4, mount.efs, curl, aws on PATH" commands exportfs nfsconf mount.nfs4 mount.efs curl aws
mark
install_packages
ensure_aws_cli
check "second run calls no dnf" no_dnf_or_rpm_install
check "no apt or dpkg command ran" no_apt
mark
EFSC_NODE_DISK_CACHE=true
install_packages
check "a node with the disk cache adds SPAL, then its disk packages in one call" dnf_calls_are \
  'dnf -qy install spal-release' 'dnf -qy install mdadm e2fsprogs cachefilesd'
check "mdadm, mkfs.ext4, cachefilesd on PATH" commands mdadm mkfs.ext4 cachefilesd
mark
EFSC_MIRROR_PATHS='/efs/app'
install_packages
check "mirrors add rsync (the sync's copies; find walks) and nftables (their nfsd's port) in one call" dnf_calls_are 'dnf -qy install rsync nftables'
check "rsync and nft on PATH" commands rsync nft
mark
install_packages
check "a second run with mirrors and the disk cache calls no dnf" no_dnf_or_rpm_install
