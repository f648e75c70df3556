#!/bin/bash
set -euo pipefail
# FS-Cache client (EC2 user-data; parameters in docs/CONTRACT.md). In order: check the parameters, install the
# packages, install a copy of itself, fscache-status and a boot unit, build or reassemble the cache disk (RAID 0 of the
# devices whose model is EFSC_DEVICE_MODEL, or the one device), mount it, run cachefilesd and check that the kernel
# uses the cache, mount the NFS server with fsc and check FSC yes.
#   bootstrap.sh          everything (first boot, from cloud-init; running it again changes nothing)
#   bootstrap.sh --boot   cache disk and cachefilesd only (every boot, from efs-cache-client.service)
#   bootstrap.sh --status what fscache-status prints
#   bootstrap.sh --metrics one run of the metrics collector (lib/metrics.sh; efs-cache-metrics.timer)
# Run from a checkout, source the library (in user-data it is inlined above, and the renderer drops this block).
# efs-cache: standalone begin
if ! declare -F die >/dev/null; then
  EFS_CACHE_LIB="$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
  # shellcheck source-path=SCRIPTDIR source=../lib/common.sh
  source "$EFS_CACHE_LIB"
  # shellcheck source-path=SCRIPTDIR source=../lib/metrics.sh
  source "${EFS_CACHE_LIB%/*}/metrics.sh"
  EFS_CACHE_LIB+=":${EFS_CACHE_LIB%/*}/metrics.sh"
fi
# efs-cache: standalone end

SELF=/usr/local/lib/efs-cache/client.sh
UNIT=efs-cache-cachefilesd.service

check_parameters() {
  local k x
  need EFSC_NFS_SERVER "$RE_HOST" 'a DNS name or an IP address'
  need EFSC_NFS_PATH "$RE_PATH" 'an absolute path'
  need EFSC_MOUNT_POINT "$RE_DIR" 'an absolute path other than /'
  need EFSC_MOUNT_TYPE '^(nfs4|efs)$' 'nfs4 or efs'
  need EFSC_MOUNT_OPTIONS "$RE_OPTS" 'a comma-separated list without spaces'
  [[ ",$EFSC_MOUNT_OPTIONS," =~ ,fsc[,=] ]] || die "EFSC_MOUNT_OPTIONS must contain fsc"
  need EFSC_MOUNT_TIMEOUT_SEC '^[1-9][0-9]{0,3}$' 'seconds, 1-9999'
  need EFSC_CACHE_DIR "$RE_DIR" 'an absolute path other than /'
  [ "$EFSC_CACHE_DIR" != "$EFSC_MOUNT_POINT" ] || die "EFSC_CACHE_DIR and EFSC_MOUNT_POINT must differ"
  need EFSC_CACHE_LABEL '^[A-Za-z0-9_-]{1,16}$' 'an ext4 label: 1-16 of A-Z a-z 0-9 _ -'
  need EFSC_CACHE_TAG '^[A-Za-z0-9_-]{1,32}$' 'a tag: 1-32 of A-Z a-z 0-9 _ -'
  need EFSC_CACHE_SOURCE '^(instance-store|ebs)$' 'instance-store or ebs'
  need EFSC_DEVICE_MODEL '^[[:print:]]*[^[:space:]]$' 'a device model string'
  need EFSC_INITIALIZE_DEVICES '^(true|false)$' 'true or false'
  for k in B F; do
    for x in RUN CULL STOP; do need "EFSC_CULL_$k$x" '^(0|[1-9][0-9]?)$' 'a percentage, 0-99'; done
    x="EFSC_CULL_$k"
    ((${x}STOP < ${x}CULL && ${x}CULL < ${x}RUN)) || die "need 0 <= ${x}STOP < ${x}CULL < ${x}RUN < 100"
  done
  need EFSC_MIRROR_MOUNTS '^( ?/mirror/[A-Za-z0-9._/-]+=/[A-Za-z0-9._/-]+)*$' 'path=mount point pairs, or empty'
  if [ -n "$EFSC_MIRROR_MOUNTS" ]; then need EFSC_MIRROR_MOUNT_OPTIONS "$RE_OPTS" 'mount options'; fi
  metrics_check
}

# The disks that may hold the cache: model EFSC_DEVICE_MODEL, no partitions, nothing mounted from them or from what
# they hold (this rules out the root disk), and blank or holding only an md member or our own file system.
cache_disks() {
  local s n m t
  for s in /sys/block/*; do
    n="${s##*/}"
    # read trims the spaces that pad the model string.
    read -r m 2>/dev/null <"$s/device/model" || continue
    [ "$m" = "$EFSC_DEVICE_MODEL" ] || continue
    t=$(blkid -p -s TYPE -o value "/dev/$n" 2>/dev/null) || true
    if compgen -G "$s/$n*/partition" >/dev/null; then
      warn "skipping /dev/$n: it has partitions"
    elif [ -n "$(lsblk -nro MOUNTPOINT "/dev/$n")" ]; then
      warn "skipping /dev/$n: it is in use (mounted, swap or root)"
    elif [ -z "$t" ] || [ "$t" = linux_raid_member ] ||
      [ "$(blkid -p -s LABEL -o value "/dev/$n")" = "$EFSC_CACHE_LABEL" ]; then
      echo "$n"
    else
      warn "skipping /dev/$n: it holds a $t file system that is not the cache"
    fi
  done
}

cache_fs() {
  udevadm settle || true
  blkid -c /dev/null -L "$EFSC_CACHE_LABEL" >/dev/null
}

# Stops the md arrays (unmounted, as cache_disks checked) that hold disk $1, so that it can be reused.
release_disk() {
  local h
  for h in /sys/block/"$1"/holders/md*; do
    if [ -e "$h" ]; then mdadm --stop "/dev/${h##*/}" || die "cannot stop /dev/${h##*/} on /dev/$1"; fi
  done
}

# After a reboot the disks still hold the cache: find it, reassembling the array when udev did not (auto-assembly
# also starts arrays of another homehost). After a stop/start (or on first boot) they are blank, and an array that
# lost a member cannot start: build the array (or use the one disk) and the file system.
prepare_cache_disk() {
  local disks=() d dev="/dev/md/$EFSC_CACHE_LABEL"
  if cache_fs; then return 0; fi
  mdadm --assemble --scan --run >/dev/null 2>&1 || true
  if cache_fs; then
    log "reassembled the cache array"
    return 0
  fi
  wait_for 30 test -n "$(cache_disks 2>/dev/null)" || die "no usable cache device of model '$EFSC_DEVICE_MODEL'"
  mapfile -t disks < <(cache_disks)
  log "building a new cache on ${disks[*]}"
  for d in "${disks[@]}"; do
    release_disk "$d"
    wipefs -qa "/dev/$d" || die "cannot wipe /dev/$d"
  done
  if [ "$EFSC_INITIALIZE_DEVICES" = true ]; then
    log "initializing ${disks[*]} with one full write"
    for d in "${disks[@]}"; do
      dd if=/dev/zero of="/dev/$d" bs=1M oflag=direct status=none iflag=count_bytes \
        count="$(blockdev --getsize64 "/dev/$d")" &
    done
    for d in "${disks[@]}"; do wait -n || die "initializing a cache device failed"; done
  fi
  if [ "${#disks[@]}" -eq 1 ]; then
    dev="/dev/${disks[0]}"
  else
    mdadm --create "$dev" --level=0 --raid-devices="${#disks[@]}" --run "${disks[@]/#//dev/}" ||
      die "mdadm could not build a RAID 0 of ${disks[*]}"
  fi
  mkfs.ext4 -qF -m 0 -L "$EFSC_CACHE_LABEL" "$dev" || die "mkfs.ext4 failed on $dev"
  cache_fs || die "no file system labelled $EFSC_CACHE_LABEL after mkfs"
}

# Never noatime: cachefilesd culls by atime. ext4 has the user xattrs cachefiles needs. noauto: the boot unit mounts it
# once the disk is ready (after a stop/start it does not exist before the unit builds it).
mount_cache() {
  mkdir -p "$EFSC_CACHE_DIR"
  fstab_set "$EFSC_CACHE_DIR" "LABEL=$EFSC_CACHE_LABEL $EFSC_CACHE_DIR ext4 defaults,noauto,nofail 0 2"
  if ! mountpoint -q "$EFSC_CACHE_DIR"; then
    mount "$EFSC_CACHE_DIR" || mountpoint -q "$EFSC_CACHE_DIR" || die "cannot mount the cache at $EFSC_CACHE_DIR"
  fi
  [ "$(findmnt -no LABEL "$EFSC_CACHE_DIR")" = "$EFSC_CACHE_LABEL" ] || die "$EFSC_CACHE_DIR is not LABEL=$EFSC_CACHE_LABEL"
  label_cache_dir
}

# With SELinux enabled (enforcing is a supported setting on Amazon Linux 2023) cachefilesd may only use a directory
# labelled cachefiles_var_t: the policy labels /var/cache/fscache so, another directory gets the same rule first. Every
# boot: a rebuilt cache file system carries no labels.
label_cache_dir() {
  if ! command -v selinuxenabled >/dev/null || ! selinuxenabled; then return 0; fi
  if [[ "$(matchpathcon -n "$EFSC_CACHE_DIR")" != *:cachefiles_var_t:* ]]; then
    command -v semanage >/dev/null || { detect_os && ensure_packages policycoreutils-python-utils; }
    semanage fcontext -a -t cachefiles_var_t "$EFSC_CACHE_DIR(/.*)?" || die "cannot add an SELinux rule for $EFSC_CACHE_DIR"
  fi
  restorecon -R "$EFSC_CACHE_DIR" || die "restorecon failed on $EFSC_CACHE_DIR"
  [[ "$(stat -c %C "$EFSC_CACHE_DIR")" == *:cachefiles_var_t:* ]] || die "$EFSC_CACHE_DIR is not labelled cachefiles_var_t"
}

# fstab_set MOUNTPOINT LINE: makes LINE the only /etc/fstab entry for MOUNTPOINT, in the place of the first one.
fstab_set() {
  if put_file /etc/fstab 0644 < <(awk -v m="$1" -v l="$2" '$2 == m { if (!d) print l; d = 1; next } 1
    END { if (!d) print l }' /etc/fstab); then
    systemctl daemon-reload
  fi
}

cache_active() {
  awk -v t="$EFSC_CACHE_TAG" '$NF == t && $(NF-1) == "A" { f = 1 } END { exit !f }' /proc/fs/fscache/caches
}

cachefilesd_ok() {
  local pid
  pid=$(systemctl show -p MainPID --value "$UNIT")
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = cachefilesd ] && cache_active
}

# The distribution's cachefilesd unit (a SysV script on Debian/Ubuntu) can report success while no daemon runs and
# failure while one runs: it is masked, and our unit runs `cachefilesd -n` in the foreground under systemd. Success is
# judged by the process and the kernel's list of caches, never by a unit's exit status.
start_cachefilesd() {
  local restart=false
  if put_file /etc/cachefilesd.conf 0644 <<EOF; then restart=true; fi
dir $EFSC_CACHE_DIR
tag $EFSC_CACHE_TAG
brun $EFSC_CULL_BRUN%
bcull $EFSC_CULL_BCULL%
bstop $EFSC_CULL_BSTOP%
frun $EFSC_CULL_FRUN%
fcull $EFSC_CULL_FCULL%
fstop $EFSC_CULL_FSTOP%
EOF
  if [ -f /etc/default/cachefilesd ] && ! grep -qx RUN=yes /etc/default/cachefilesd; then
    echo RUN=yes >>/etc/default/cachefilesd
  fi
  put_unit "$UNIT" <<EOF
[Unit]
Description=efs-cache: cachefilesd for $EFSC_CACHE_DIR
RequiresMountsFor=$EFSC_CACHE_DIR
Conflicts=cachefilesd.service
[Service]
ExecStartPre=-modprobe cachefiles
ExecStart=cachefilesd -n -s -f /etc/cachefilesd.conf
Restart=on-failure
RestartSec=5
EOF
  if [ "$(systemctl is-enabled cachefilesd.service 2>/dev/null)" != masked ]; then
    systemctl stop cachefilesd.service 2>/dev/null || true
    systemctl mask -q cachefilesd.service
  fi
  if [ "$restart" = true ]; then systemctl restart "$UNIT"; else systemctl start "$UNIT"; fi || true
  wait_for 30 cachefilesd_ok || die "cachefilesd is not running with cache $EFSC_CACHE_TAG active (journalctl -u $UNIT)"
  log "cachefilesd runs; cache $EFSC_CACHE_TAG is active on $EFSC_CACHE_DIR"
}

install_boot_unit() {
  install_self "$SELF"
  put_file /usr/local/bin/fscache-status 0755 <<<$'#!/bin/sh\nexec '"$SELF --status" || true
  put_unit efs-cache-client.service <<EOF
[Unit]
Description=efs-cache: rebuild or reassemble the FS-Cache disk, start cachefilesd
After=local-fs.target
Wants=remote-fs-pre.target
Before=remote-fs-pre.target
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=$SELF --boot
[Install]
WantedBy=multi-user.target
EOF
  systemctl enable -q efs-cache-client.service
}

fsc_of() {
  awk -v d="$(mountpoint -d "$1")" '$4 == d { print $NF }' /proc/fs/nfsfs/volumes
}

# The mount is bounded by EFSC_MOUNT_TIMEOUT_SEC: a hard mount of an unreachable server would wait forever.
mount_nfs() {
  local src="$EFSC_NFS_SERVER:$EFSC_NFS_PATH" mp="$EFSC_MOUNT_POINT"
  if [ "$EFSC_MOUNT_TYPE" = efs ] && ! command -v mount.efs >/dev/null; then die "mount type efs needs amazon-efs-utils"; fi
  mkdir -p "$mp"
  fstab_set "$mp" "$src $mp $EFSC_MOUNT_TYPE $EFSC_MOUNT_OPTIONS,_netdev,nofail 0 0"
  if ! mountpoint -q "$mp"; then
    log "mounting $src at $mp"
    timeout -k 10 "$EFSC_MOUNT_TIMEOUT_SEC" mount "$mp" || die "could not mount $src at $mp in ${EFSC_MOUNT_TIMEOUT_SEC}s"
  fi
  [ "$(fsc_of "$mp")" = yes ] || die "$mp is mounted without FS-Cache (/proc/fs/nfsfs/volumes: FSC no)"
  log "$mp is mounted with FS-Cache"
}

# The fleet's mirrors (EFSC_MIRROR_MOUNTS): plain NFSv4.1 mounts of the same server, read-only, without fsc.
mount_mirrors() {
  local m src mp
  for m in $EFSC_MIRROR_MOUNTS; do
    src="$EFSC_NFS_SERVER:${m%%=*}" mp="${m#*=}"
    mkdir -p "$mp"
    fstab_set "$mp" "$src $mp nfs4 $EFSC_MIRROR_MOUNT_OPTIONS,_netdev,nofail 0 0"
    if ! mountpoint -q "$mp"; then
      log "mounting the mirror $src at $mp"
      timeout -k 10 "$EFSC_MOUNT_TIMEOUT_SEC" mount "$mp" || die "could not mount the mirror $src at $mp in ${EFSC_MOUNT_TIMEOUT_SEC}s"
    fi
  done
}

status() {
  local t s
  echo "cache $EFSC_CACHE_DIR (label $EFSC_CACHE_LABEL, tag $EFSC_CACHE_TAG):"
  df -h --output=source,size,used,avail,pcent "$EFSC_CACHE_DIR" || true
  echo "cachefilesd: $(systemctl is-active "$UNIT"), pid $(systemctl show -p MainPID --value "$UNIT"), cache" \
    "$(cache_active 2>/dev/null && echo active || echo NOT ACTIVE)"
  echo "FS-Cache counters (IO rd: pages read from the cache, wr: written to it):"
  grep -E '^(Cookies|Acquire|IO|NoSpace|RdHelp)' /proc/fs/fscache/stats || true
  findmnt -rn -t nfs,nfs4 -o TARGET,SOURCE | while read -r t s; do
    echo "NFS $t from $s: FSC $(fsc_of "$t")"
  done
}

# The client's metrics for lib/metrics.sh (names and meaning: lib/monitoring/metrics.ts), from /proc/fs/fscache/stats
# on kernel 6.1: "IO : rd=N wr=N" (pages read from and written to the cache), "NoSpace: nwr=N ncr=N cull=N" (objects
# culled); and the cache file system's free blocks.
metrics_read() {
  sed -En 's/^IO *: rd=([0-9]+) wr=([0-9]+).*/FscacheReads c \1\nFscacheWrites c \2/p
    s/^NoSpace:.* cull=([0-9]+).*/FscacheCulled c \1/p' /proc/fs/fscache/stats
  if mountpoint -q "$EFSC_CACHE_DIR"; then echo "CacheDiskFreePercent g $(($(stat -fc %a*100/%b "$EFSC_CACHE_DIR")))"; fi
}

# The packages of the first boot. cachefilesd is in Amazon Linux 2023's SPAL repository, not its core: spal-release
# (core) adds that repository first. test/al2023 runs this with the real dnf against repositories of AL2023's names.
install_packages() {
  if [ "$OS_PKG" = dnf ]; then
    pkg_installed cachefilesd || ensure_packages spal-release
    ensure_packages mdadm e2fsprogs cachefilesd nfs-utils
  else
    ensure_packages mdadm e2fsprogs cachefilesd nfs-common
  fi
  if [ "$EFSC_MOUNT_TYPE" = efs ]; then ensure_efs_utils; fi
}

main() {
  check_parameters
  case "${1:-}" in
    --status) status ;;
    --metrics)
      metrics_collect
      return
      ;;
    --boot) ;;
    "")
      detect_os
      install_packages
      install_boot_unit
      ;;
    *) die "unknown argument '$1' (use --boot, --status or --metrics)" ;;
  esac
  if [ "${1:-}" != --status ]; then
    prepare_cache_disk
    mount_cache
    start_cachefilesd
  fi
  if [ -z "${1:-}" ]; then
    mount_nfs
    mount_mirrors
    metrics_setup
    log "client ready: $EFSC_MOUNT_POINT, cached on $EFSC_CACHE_DIR (fscache-status)"
  fi
}

main "$@"
