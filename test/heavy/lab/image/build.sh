#!/bin/bash
# Builds the lab's guest image: a Debian bookworm root (debootstrap) with the packages the instance scripts need,
# cloud-init reading a NoCloud seed, the qemu guest agent, and a unit that sets a static address from the kernel
# command line. Output: .lab-cache/image-<hash>/{root.img,vmlinuz,initrd.img,packages.txt}, where <hash> covers
# everything under test/heavy/lab/image/. An unchanged recipe reuses the image; a changed one rebuilds it.
#
# Usage: build.sh            build if needed, print the image directory on stdout (progress goes to stderr)
#        build.sh --path     print the image directory if it is built, exit 1 if it is not (no root needed)
#        build.sh --host-deps  only install the host packages the lab needs
# Environment: LAB_CACHE_DIR (default <repo>/.lab-cache), LAB_MIRROR (default: the Debian mirror apt uses),
#              LAB_ROOT_SIZE (default 4G, sparse).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "${here}/../../../.." && pwd)"
cache="${LAB_CACHE_DIR:-${repo}/.lab-cache}"
suite=bookworm
root_size="${LAB_ROOT_SIZE:-4G}"
t0=${SECONDS}

log() { printf '[image %4ds] %s\n' "$((SECONDS - t0))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

recipe_hash() {
  # Hash of every file of the recipe, with its path, in a stable order.
  (cd "${here}" && find . -type f -print0 | LC_ALL=C sort -z |
    while IFS= read -r -d '' f; do printf '%s\n' "${f}"; stat -c '%a' "${f}"; cat "${f}"; done) |
    sha256sum | cut -c1-16
}

image_dir="${cache}/image-$(recipe_hash)"

if [[ "${1:-}" == "--path" ]]; then
  [[ -f "${image_dir}/done" ]] || { echo "no image at ${image_dir}: run ${here}/build.sh" >&2; exit 1; }
  printf '%s\n' "${image_dir}"
  exit 0
fi

[[ "$(id -u)" -eq 0 ]] || die "must run as root (debootstrap, chroot, ip netns)"

host_packages=(qemu-system-x86 qemu-utils debootstrap dnsmasq-base iproute2 dosfstools mtools e2fsprogs util-linux)
install_host_packages() {
  local missing=() p
  for p in "${host_packages[@]}"; do
    dpkg-query -W -f='${Status}' "${p}" 2>/dev/null | grep -q 'install ok installed' || missing+=("${p}")
  done
  if ((${#missing[@]} == 0)); then
    log "host packages present"
    return 0
  fi
  log "installing host packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  local aptlog
  aptlog="$(mktemp)"
  if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; } > "${aptlog}" 2>&1; then
    tail -n 30 "${aptlog}" >&2
    die "could not install host packages (apt log: ${aptlog})"
  fi
  rm -f "${aptlog}"
  log "host packages installed"
}

install_host_packages
if [[ "${1:-}" == "--host-deps" ]]; then exit 0; fi

if [[ -f "${image_dir}/done" ]]; then
  log "image up to date: ${image_dir}"
  printf '%s\n' "${image_dir}"
  exit 0
fi

# The Debian mirror apt uses on this host (deb822 or one-line format), unless LAB_MIRROR says otherwise.
find_mirror() {
  local f
  if [[ -n "${LAB_MIRROR:-}" ]]; then printf '%s\n' "${LAB_MIRROR}"; return 0; fi
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "${f}" ]] || continue
    awk -v suite="${suite}" '
      function flush() { if (uris != "" && (" " suites " ") ~ (" " suite " ") && types ~ /(^| )deb( |$)/) { split(uris, u, " "); print u[1]; found = 1; exit } uris = ""; suites = ""; types = "" }
      /^[[:space:]]*$/ { flush(); next }
      /^URIs:/ { sub(/^URIs:[[:space:]]*/, ""); uris = $0 }
      /^Suites:/ { sub(/^Suites:[[:space:]]*/, ""); suites = $0 }
      /^Types:/ { sub(/^Types:[[:space:]]*/, ""); types = $0 }
      END { if (!found) flush() }' "${f}" | head -n1
  done | head -n1 | grep . && return 0
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f "${f}" ]] || continue
    awk -v suite="${suite}" '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } if ($(i + 1) == suite) { print $i; exit } }' "${f}"
  done | head -n1 | grep . && return 0
  printf '%s\n' "http://deb.debian.org/debian"
}

read_list() { grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$1" | tr -d ' \t'; }

mkdir -p "${cache}"
exec 9> "${cache}/build.lock"
log "waiting for the build lock" && flock 9
if [[ -f "${image_dir}/done" ]]; then
  log "image built meanwhile: ${image_dir}"
  printf '%s\n' "${image_dir}"
  exit 0
fi

mirror="$(find_mirror)"
work="${image_dir}.tmp"
rootdir="${work}/root"
debs="${cache}/debs"
mounted=()

cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  mounted=()
}
trap cleanup EXIT

# A build killed half-way may have left its chroot mounts behind: never delete through them.
unmount_under() {
  local m
  findmnt -rn -o TARGET | { grep -F "$1/" || true; } | LC_ALL=C sort -r | while IFS= read -r m; do umount -l "${m}" || true; done
}
unmount_under "${work}"
rm -rf --one-file-system "${work}"
mkdir -p "${rootdir}" "${debs}"

base_list="$(read_list "${here}/packages.base" | paste -sd, -)"
mapfile -t extra_list < <(read_list "${here}/packages.extra")

log "debootstrap ${suite} from ${mirror} (minbase + ${base_list})"
# debootstrap may report configure failures of single packages (seen with fpart -> bsd-mailx -> exim4 in the
# include list, hence fpart is installed by apt below); they are repaired below.
if ! debootstrap --variant=minbase --components=main --cache-dir="${debs}" --include="${base_list}" \
  "${suite}" "${rootdir}" "${mirror}" > "${work}/debootstrap.log" 2>&1; then
  [[ -x "${rootdir}/usr/bin/dpkg" && -x "${rootdir}/usr/bin/apt-get" ]] || {
    tail -n 30 "${work}/debootstrap.log" >&2
    die "debootstrap failed (log: ${work}/debootstrap.log)"
  }
  log "debootstrap reported errors (tail below); repairing in the chroot"
  tail -n 8 "${work}/debootstrap.log" >&2
fi
log "debootstrap done ($(du -sh "${rootdir}" | cut -f1))"

chroot_mount() {
  mount "$@"
  mounted+=("${!#}")
}
chroot_mount -t proc proc "${rootdir}/proc"
chroot_mount -t sysfs sysfs "${rootdir}/sys"
chroot_mount --bind /dev "${rootdir}/dev"
chroot_mount --bind /dev/pts "${rootdir}/dev/pts"
cp -L /etc/resolv.conf "${rootdir}/etc/resolv.conf"
printf 'deb %s %s main\n' "${mirror}" "${suite}" > "${rootdir}/etc/apt/sources.list"
# No service may start inside the chroot while packages install.
printf '#!/bin/sh\nexit 101\n' > "${rootdir}/usr/sbin/policy-rc.d"
chmod 755 "${rootdir}/usr/sbin/policy-rc.d"

in_root() { chroot "${rootdir}" /usr/bin/env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }

log "repairing half-configured packages"
in_root dpkg --configure -a > "${work}/repair.log" 2>&1 || true
in_root apt-get -f install -y -q >> "${work}/repair.log" 2>&1 || { tail -n 30 "${work}/repair.log" >&2; die "apt-get -f install failed"; }

log "installing extra packages: ${extra_list[*]}"
in_root apt-get update -q > "${work}/apt.log" 2>&1 || { tail -n 30 "${work}/apt.log" >&2; die "apt-get update failed"; }
in_root apt-get install -y -q --no-install-recommends "${extra_list[@]}" >> "${work}/apt.log" 2>&1 ||
  { tail -n 30 "${work}/apt.log" >&2; die "apt-get install failed"; }
in_root dpkg --configure -a >> "${work}/apt.log" 2>&1
# shellcheck disable=SC2016 # a dpkg-query format, not a shell expansion
if in_root dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | grep -v '^ii '; then
  die "packages left unconfigured (listed above)"
fi

# The kernel matrix: each kernel of test/heavy/lab/image/kernels, the one its suite's linux-image-amd64 depends on, unpacked
# into the root (dpkg -x: the files alone, so nothing else of another suite enters the bookworm root) and its modules
# indexed; its initrd is made below by bookworm's initramfs-tools, with the lab's initramfs configuration. The suites'
# package lists are removed afterwards.
extra_kernels=()
base_kernel="$(find "${rootdir}/boot" -name 'vmlinuz-*' | sort | tail -n1)"
base_initrd="${base_kernel/vmlinuz-/initrd.img-}"
while read -r tag ksuite; do
  printf 'deb %s %s main\n' "${mirror}" "${ksuite}" > "${rootdir}/etc/apt/sources.list.d/lab-kernel.list"
  in_root apt-get update -q > "${work}/kernel-${tag}.log" 2>&1 || { tail -n 30 "${work}/kernel-${tag}.log" >&2; die "apt-get update for ${ksuite} failed"; }
  # depends: the Depends items of a package of the suite, one name per line.
  depends() { in_root apt-cache show "$1/${ksuite}" 2>>"${work}/kernel-${tag}.log" | sed -n '0,/^Depends: /s/^Depends: //p' | tr ',|' '\n' | awk '{ print $1 }'; }
  pkg="$(depends linux-image-amd64 | grep -m1 -E '^linux-image-[0-9].*-amd64$' || true)"
  [[ -n "${pkg}" ]] || { tail -n 30 "${work}/kernel-${tag}.log" >&2; die "no kernel package for ${ksuite} (linux-image-amd64/${ksuite})"; }
  ver="${pkg#linux-image-}"
  # Newer suites split the kernel into packages of the same version (linux-binary-, linux-modules-, linux-base-).
  mapfile -t pkgs < <(printf '%s\n' "${pkg}"; depends "${pkg}" | awk -v v="-${ver}" 'substr($0, length($0) - length(v) + 1) == v')
  log "kernel ${tag}: ${pkgs[*]} from ${ksuite}"
  in_root sh -c "rm -rf /tmp/k && mkdir /tmp/k && cd /tmp/k && apt-get download -q $(printf "'%s/${ksuite}' " "${pkgs[@]}") && for d in /tmp/k/*.deb; do dpkg -x \"\$d\" /; done && rm -rf /tmp/k" \
    >> "${work}/kernel-${tag}.log" 2>&1 ||
    { tail -n 30 "${work}/kernel-${tag}.log" >&2; die "could not unpack ${pkgs[*]}"; }
  # Those put the kernel, its config and System.map in /lib/modules/<version>; their maintainer scripts (not run by
  # dpkg -x) would copy them to /boot, where initramfs-tools looks.
  for f in vmlinuz config System.map; do
    if [[ ! -e "${rootdir}/boot/${f}-${ver}" && -e "${rootdir}/lib/modules/${ver}/${f}" ]]; then
      cp "${rootdir}/lib/modules/${ver}/${f}" "${rootdir}/boot/${f}-${ver}"
    fi
  done
  [[ -f "${rootdir}/boot/vmlinuz-${ver}" && -d "${rootdir}/lib/modules/${ver}/kernel" ]] || die "${pkgs[*]} left no /boot/vmlinuz-${ver} or /lib/modules/${ver}"
  in_root depmod -a "${ver}" >> "${work}/kernel-${tag}.log" 2>&1 || die "depmod ${ver} failed"
  extra_kernels+=("${tag}:${ver}")
done < <(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "${here}/kernels")
rm -f "${rootdir}/etc/apt/sources.list.d/lab-kernel.list"
in_root apt-get update -q > /dev/null 2>&1 || true

log "configuring the guest"
# debootstrap leaves a fake start-stop-daemon when a configure step failed: put the real one back.
if [[ -e "${rootdir}/sbin/start-stop-daemon.REAL" ]]; then
  mv -f "${rootdir}/sbin/start-stop-daemon.REAL" "${rootdir}/sbin/start-stop-daemon"
fi
if [[ -e "${rootdir}/usr/sbin/start-stop-daemon.REAL" ]]; then
  mv -f "${rootdir}/usr/sbin/start-stop-daemon.REAL" "${rootdir}/usr/sbin/start-stop-daemon"
fi
if grep -q 'Fake start-stop-daemon' "${rootdir}/sbin/start-stop-daemon" "${rootdir}/usr/sbin/start-stop-daemon" 2>/dev/null; then
  die "start-stop-daemon is still dpkg's fake one"
fi
rm -f "${rootdir}/usr/sbin/policy-rc.d"

cp -a "${here}/rootfs/." "${rootdir}/"
chown -R root:root "${rootdir}/etc/cloud/cloud.cfg.d" "${rootdir}/etc/systemd/system/lab-net.service" "${rootdir}/usr/local/sbin/lab-net" "${rootdir}/usr/local/sbin/lab-nic-reset" \
  "${rootdir}/etc/systemd/system/lab-gate.service" "${rootdir}/usr/local/sbin/lab-gate" \
  "${rootdir}/etc/systemd/system/sys-subsystem-net-devices-eth0.device.d" "${rootdir}/etc/systemd/system.conf.d"
printf 'lab\n' > "${rootdir}/etc/hostname"
printf '127.0.0.1\tlocalhost\n' > "${rootdir}/etc/hosts"
printf 'LABEL=labroot\t/\text4\tdefaults,errors=remount-ro\t0\t1\n' > "${rootdir}/etc/fstab"
rm -f "${rootdir}/etc/resolv.conf"
printf '# set at boot by lab-net from the kernel command line\n' > "${rootdir}/etc/resolv.conf"
# Each VM gets its own machine id on first boot.
: > "${rootdir}/etc/machine-id"
rm -f "${rootdir}/var/lib/dbus/machine-id"
in_root systemctl enable lab-net.service lab-gate.service serial-getty@ttyS0.service > /dev/null 2>&1
# A fresh instance does not serve NFS until its user-data says so (nor runs containers until a test starts Docker, nor
# serves the CMS until test/heavy/lab/scenarios/cms.ts starts its web server);
# housekeeping timers only add noise to timings.
in_root systemctl disable nfs-server.service > /dev/null 2>&1 || true
for unit in exim4.service nvmf-autoconnect.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer \
  man-db.timer mdcheck_start.timer mdcheck_continue.timer mdmonitor-oneshot.timer docker.service docker.socket containerd.service \
  nginx.service php8.2-fpm.service mariadb.service mariadb.socket phpsessionclean.timer; do
  in_root systemctl disable "${unit}" > /dev/null 2>&1 || true
done
# cloud-init's config stage runs no module the lab uses (rootfs/etc/cloud/cloud.cfg.d/90-lab.cfg).
in_root systemctl mask cloud-config.service > /dev/null 2>&1
# Units no lab VM uses (no display, no foreign binaries, no huge pages, no kernel debugging, no pNFS block layouts,
# no IPVS rules to restore at boot: aws.lab.ts sets its own): every boot under software emulation pays for each.
for unit in modprobe@drm.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount proc-sys-fs-binfmt_misc.mount \
  dev-hugepages.mount sys-kernel-debug.mount sys-kernel-tracing.mount nfs-blkmap.service; do
  in_root systemctl mask "${unit}" > /dev/null 2>&1
done
in_root systemctl disable ipvsadm.service > /dev/null 2>&1 || true
in_root passwd -d root > /dev/null
log "rebuilding the initrd (MODULES=list)"
in_root update-initramfs -u -k all > "${work}/initramfs.log" 2>&1 || { tail -n 30 "${work}/initramfs.log" >&2; die "update-initramfs failed"; }
for k in "${extra_kernels[@]}"; do
  in_root update-initramfs -c -k "${k#*:}" >> "${work}/initramfs.log" 2>&1 ||
    { tail -n 30 "${work}/initramfs.log" >&2; die "update-initramfs for ${k#*:} failed"; }
done

# shellcheck disable=SC2016 # a dpkg-query format, not a shell expansion
in_root dpkg-query -W -f='${Package} ${Version}\n' > "${work}/packages.txt"
in_root apt-get clean
rm -rf "${rootdir}/var/lib/apt/lists/"* "${rootdir}/var/lib/cloud/"* "${rootdir}/var/log/"*.log "${rootdir}/tmp/"*
cleanup

log "extracting kernel and initrd"
kernel="$(readlink -f "${rootdir}/vmlinuz" 2>/dev/null || true)"
[[ -f "${kernel}" ]] || kernel="${base_kernel}"
initrd="$(readlink -f "${rootdir}/initrd.img" 2>/dev/null || true)"
[[ -f "${initrd}" ]] || initrd="${base_initrd}"
[[ -f "${kernel}" && -f "${initrd}" ]] || die "kernel or initrd missing in ${rootdir}/boot"
cp "${kernel}" "${work}/vmlinuz"
cp "${initrd}" "${work}/initrd.img"
for k in "${extra_kernels[@]}"; do
  cp "${rootdir}/boot/vmlinuz-${k#*:}" "${work}/vmlinuz-${k%%:*}"
  cp "${rootdir}/boot/initrd.img-${k#*:}" "${work}/initrd-${k%%:*}.img"
done

log "making root.img (ext4, ${root_size}, from the root folder)"
truncate -s "${root_size}" "${work}/root.img"
mkfs.ext4 -q -F -L labroot -d "${rootdir}" "${work}/root.img"
unmount_under "${work}"
rm -rf --one-file-system "${rootdir}"

printf 'kernel=%s\nmirror=%s\nsuite=%s\n' "$(basename "${kernel}")" "${mirror}" "${suite}" > "${work}/build-info.txt"
for k in "${extra_kernels[@]}"; do printf 'kernel-%s=%s\n' "${k%%:*}" "${k#*:}" >> "${work}/build-info.txt"; done
touch "${work}/done"
rm -rf "${image_dir}"
mv "${work}" "${image_dir}"
# Older images (other recipes) are of no further use.
find "${cache}" -maxdepth 1 -name 'image-*' ! -path "${image_dir}" -exec rm -rf {} +
log "image ready: ${image_dir} ($(du -sh --apparent-size "${image_dir}/root.img" | cut -f1) sparse, $(du -sh "${image_dir}/root.img" | cut -f1) used)"
printf '%s\n' "${image_dir}"
