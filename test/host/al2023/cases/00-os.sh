# shellcheck shell=bash disable=SC1091,SC2016,SC2034 # sourced by test/host/al2023/run.sh in the chroot, after lib.sh
# The chroot looks like Amazon Linux 2023 to detect_os, and its core repository lacks what SPAL carries.
detect_os
check "detect_os takes the dnf branch on AL2023's os-release" [ "$OS_PKG" = dnf ]
check "no curl, aws, rsync or mount.efs before the scripts run (a minimal image)" no_commands curl aws rsync mount.efs
mark
out="$( (ensure_packages cachefilesd) 2>&1)" && s=0 || s=$?
check "cachefilesd is not installable before spal-release (exit 1)" [ "$s" = 1 ]
check "and the run says so: efs-cache: FATAL: could not install cachefilesd" \
  grep -qx 'efs-cache: FATAL: could not install cachefilesd' <<<"$out"
check "after three tries of dnf -qy install cachefilesd" dnf_calls_are \
  'dnf -qy install cachefilesd' 'dnf -qy install cachefilesd' 'dnf -qy install cachefilesd'
out="$( (ensure_packages fpart) 2>&1)" && s=0 || s=$?
check "fpart likewise (FATAL: could not install fpart)" grep -qx 'efs-cache: FATAL: could not install fpart' <<<"$out"
check "nothing of SPAL got installed" absent cachefilesd fpart spal-release
check "no apt or dpkg command ran" no_apt
# Amazon Linux 2 says ID=amzn too, but has yum and no dnf: refused by name, with one FATAL line, before any install.
cp /etc/os-release /opt/t/os-release.al2023
printf 'NAME="Amazon Linux"\nVERSION="2"\nID="amzn"\nID_LIKE="centos rhel fedora"\nVERSION_ID="2"\n' >/etc/os-release
mark
out="$( (OS_PKG='' && detect_os) 2>&1)" && s=0 || s=$?
check "Amazon Linux 2's os-release: detect_os ends the run (exit 1)" [ "$s" = 1 ]
check "with one line: efs-cache: FATAL: unsupported OS: Amazon Linux 2 (need Amazon Linux 2023, Debian or Ubuntu)" \
  [ "$out" = 'efs-cache: FATAL: unsupported OS: Amazon Linux 2 (need Amazon Linux 2023, Debian or Ubuntu)' ]
check "and no package command ran" dnf_calls_are
cp /opt/t/os-release.al2023 /etc/os-release
