# shellcheck shell=bash disable=SC1091,SC2016,SC2034 # sourced by test/host/al2023/run.sh in the chroot, after lib.sh
# The seeder's packages (assets/seeding/seed.sh install_packages) for an asset source written through efs-utils:
# spal-release first, fpart from SPAL with the rest, efs-utils, then curl and the aws CLI to fetch the asset.
load_script "$A/seeding/seed.sh"
EFSC_MOUNT_TYPE=efs EFSC_SOURCE_KIND=asset
detect_os
mark
install_packages
check "first run: spal-release, the rest in one call, then efs-utils, curl, the CLI" dnf_calls_are \
  'dnf -qy install spal-release' 'dnf -qy install rsync nfs-utils fpart unzip' 'dnf -qy install amazon-efs-utils' \
  'dnf -qy install curl-minimal' 'dnf -qy install awscli-2'
check "fpsync, fpart, rsync, unzip, mount.nfs4, mount.efs, aws, curl on PATH" \
  commands fpsync fpart rsync unzip mount.nfs4 mount.efs aws curl
mark
install_packages
check "second run calls no dnf" no_dnf_or_rpm_install
check "no apt or dpkg command ran" no_apt
