#!/bin/bash
set -euo pipefail
# FS-Cache on local disks, shared by the FS-Cache client and the cache node's second cache level: find the disks
# (instance store by model string, or an EBS volume), build a RAID 0 (or use the one disk) with an ext4 file system,
# mount it, and run cachefilesd under a unit of our own. Parameters: EFSC_CACHE_DIR, EFSC_CACHE_LABEL, EFSC_CACHE_TAG,
# EFSC_DEVICE_MODEL, EFSC_INITIALIZE_DEVICES, EFSC_CULL_* (docs/CONTRACT.md). Defines functions only, and the unit's
# name: nothing runs on load.

FSCACHE_UNIT=efs-cache-cachefilesd.service

# The parameters of the disk cache.
fscache_check() {
  local k x
  need EFSC_CACHE_DIR "$RE_DIR" 'an absolute path other than /'
  need EFSC_CACHE_LABEL '^[A-Za-z0-9_-]{1,16}$' 'an ext4 label: 1-16 of A-Z a-z 0-9 _ -'
  need EFSC_CACHE_TAG '^[A-Za-z0-9_-]{1,32}$' 'a tag: 1-32 of A-Z a-z 0-9 _ -'
  need EFSC_DEVICE_MODEL '^[[:print:]]*[^[:space:]]$' 'a device model string'
  need EFSC_INITIALIZE_DEVICES '^(true|false)$' 'true or false'
  for k in B F; do
    for x in RUN CULL STOP; do need "EFSC_CULL_$k$x" '^(0|[1-9][0-9]?)$' 'a percentage, 0-99'; done
    x="EFSC_CULL_$k"
    ((${x}STOP < ${x}CULL && ${x}CULL < ${x}RUN)) || die "need 0 <= ${x}STOP < ${x}CULL < ${x}RUN < 100"
  done
}

# fscache_packages [PACKAGE...]: the packages of a disk cache, and the caller's, in one install. cachefilesd is in
# Amazon Linux 2023's SPAL repository, not its core: spal-release (core) adds that repository first. test/host/al2023 runs
# this with the real dnf against repositories of AL2023's names.
fscache_packages() {
  if [ "$OS_PKG" = dnf ] && ! pkg_installed cachefilesd; then ensure_packages spal-release; fi
  ensure_packages mdadm e2fsprogs cachefilesd "$@"
}

# fscache_boot_unit UNIT WHAT COMMAND: the oneshot unit that brings the disk cache up at every boot, before
# remote-fs-pre.target (so before any NFS mount that uses it).
fscache_boot_unit() {
  put_unit "$1" <<EOF
[Unit]
Description=efs-cache: $2
After=local-fs.target
Wants=remote-fs-pre.target
Before=remote-fs-pre.target
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=$3
[Install]
WantedBy=multi-user.target
EOF
  systemd_ctl enable -q "$1"
}

# The disk cache, ready: built or reassembled, mounted, cachefilesd running with the cache active.
fscache_up() {
  prepare_cache_disk
  mount_cache
  start_cachefilesd
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
  # Clients only: a node's EFSC_INITIALIZE_DEVICES is always false.
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
    # udev makes the array's named link; mdadm waits for it only a few seconds, and on a busy first boot udev can be
    # slower ("mdadm: timeout waiting for /dev/md/..."): mkfs would then find no device.
    wait_for 60 test -b "$dev" || die "the RAID 0 of ${disks[*]} was built, but udev did not make $dev within 60 s"
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
    systemd_ctl daemon-reload
  fi
}

cache_active() {
  awk -v t="$EFSC_CACHE_TAG" '$NF == t && $(NF-1) == "A" { f = 1 } END { exit !f }' /proc/fs/fscache/caches
}

cachefilesd_ok() {
  local pid
  pid=$(systemd_ctl show -p MainPID --value "$FSCACHE_UNIT")
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = cachefilesd ] && cache_active
}

# cachefilesd_steady: cachefilesd_ok now and 5 s later, with the same process. After a reboot cachefilesd has exited a
# second after binding its cache, and systemd started it again 5 s later (the lab, kernel 6.1): an NFS mount made in
# between is not bound to the cache (FS-Cache serves none of it) until it is mounted again.
cachefilesd_steady() {
  local pid
  cachefilesd_ok || return 1
  pid=$(systemd_ctl show -p MainPID --value "$FSCACHE_UNIT")
  sleep 5
  cachefilesd_ok && [ "$(systemd_ctl show -p MainPID --value "$FSCACHE_UNIT")" = "$pid" ]
}

# cachefilesd_heap_clear START: whether a heap that starts at START (bytes), and the 64 MiB above it, lies clear of
# addresses whose bits 28-31 are 0110. cachefilesd 0.10.10 looks for poisoned slots in its table of objects to cull by
# those bits of each pointer, a test written for 32-bit pointers: on a 64-bit machine, where address randomization
# puts its heap there about one start in 16, it aborts (SIGABRT, no message) as soon as that table has an entry, the
# first time a cached file is no longer in use, and the kernel withdraws the cache. In the lab, 2 of 96 starts of
# Debian's build aborted so, exactly those whose heap started there; and a client's cache was withdrawn mid-read.
cachefilesd_heap_clear() {
  ((($1 >> 28 & 15) != 6 && (($1 + 64 * 1024 * 1024) >> 28 & 15) != 6))
}

# cachefilesd_heap_check PID: the cachefilesd unit's ExecStartPost. Fails, so that systemd stops that cachefilesd and
# starts another 5 s later, with another layout, when its heap is where it would abort (cachefilesd_heap_clear). The
# heap's start is field 47 of /proc/PID/stat (start_brk), fixed once the process runs cachefilesd (at most 5 s).
cachefilesd_heap_check() {
  local brk _
  [[ "$1" =~ ^[1-9][0-9]*$ ]] || die "--cachefilesd-heap needs cachefilesd's process id, not '$1'"
  for _ in $(seq 1 50); do
    if [ "$(cat "/proc/$1/comm" 2>/dev/null)" = cachefilesd ]; then break; fi
    sleep 0.1
  done
  # Gone, or never cachefilesd: systemd sees to a process that died, and there is nothing to judge by here.
  [ "$(cat "/proc/$1/comm" 2>/dev/null)" = cachefilesd ] || return 0
  # The fields after the command's name (which ends with ") "): start_brk is the 45th of them.
  brk=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $45 }') || true
  if [[ ! "$brk" =~ ^[0-9]+$ ]] || cachefilesd_heap_clear "$brk"; then return 0; fi
  warn "cachefilesd's heap (at $(printf '%#x' "$brk")) lies where cachefilesd 0.10.10 aborts (bits 28-31 of its pointers 0110): starting it again"
  return 1
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
  put_unit "$FSCACHE_UNIT" <<EOF
[Unit]
Description=efs-cache: cachefilesd for $EFSC_CACHE_DIR
RequiresMountsFor=$EFSC_CACHE_DIR
Conflicts=cachefilesd.service
[Service]
ExecStartPre=-modprobe cachefiles
ExecStart=cachefilesd -n -s -f /etc/cachefilesd.conf
ExecStartPost=$SELF --cachefilesd-heap \$MAINPID
Restart=on-failure
RestartSec=5
EOF
  if [ "$(systemd_ctl is-enabled cachefilesd.service 2>/dev/null)" != masked ]; then
    systemd_ctl stop cachefilesd.service 2>/dev/null || true
    systemd_ctl mask -q cachefilesd.service
  fi
  if [ "$restart" = true ]; then systemd_ctl restart "$FSCACHE_UNIT"; else systemd_ctl start "$FSCACHE_UNIT"; fi || true
  wait_for 60 cachefilesd_steady || die "cachefilesd is not running steadily with cache $EFSC_CACHE_TAG active (journalctl -u $FSCACHE_UNIT)"
  log "cachefilesd runs; cache $EFSC_CACHE_TAG is active on $EFSC_CACHE_DIR"
}

# fscache_metrics_read: the disk cache's metrics for lib/metrics.sh (names and meaning: lib/monitoring/metrics.ts),
# printed as "NAME c|g VALUE", on a client and on a node with the disk cache.
# - FscacheReads/Writes/Culled: /proc/fs/fscache/stats "IO : rd=N wr=N" and "NoSpace: ... cull=N". What rd counts
#   depends on the kernel (6.1: every page NFS looks up in the cache, hit or miss).
# - CacheDiskReadBytes/WriteBytes: sectors (512 bytes) read and written on the cache's block device
#   (/sys/class/block/DEV/stat, fields 3 and 7). cachefiles reads and writes its files with direct I/O, so a read of
#   the device is FS-Cache serving data, on every kernel; a page-cache hit reads nothing.
# - CacheDiskGrowthBytes: the used bytes of the cache file system, as a counter: the collector sends only its increases
#   (a decrease reads as a restart and sends nothing). Writes that do not grow the cache rewrite what it held.
# - CacheDiskFreePercent: its free blocks, percent.
# The device lines only when the cache has a file system of its own.
fscache_metrics_read() {
  local dev
  [ ! -r /proc/fs/fscache/stats ] || sed -En 's/^IO *: rd=([0-9]+) wr=([0-9]+).*/FscacheReads c \1\nFscacheWrites c \2/p
    s/^NoSpace:.* cull=([0-9]+).*/FscacheCulled c \1/p' /proc/fs/fscache/stats
  mountpoint -q "$EFSC_CACHE_DIR" || return 0
  dev=$(findmnt -no SOURCE "$EFSC_CACHE_DIR") && dev=$(basename "$(readlink -f "$dev")") || return 0
  if [ -r "/sys/class/block/$dev/stat" ]; then
    awk '{ printf "CacheDiskReadBytes c %.0f\nCacheDiskWriteBytes c %.0f\n", $3 * 512, $7 * 512 }' "/sys/class/block/$dev/stat"
  fi
  stat -fc '%S %b %f %a' "$EFSC_CACHE_DIR" |
    awk '{ printf "CacheDiskGrowthBytes c %.0f\nCacheDiskFreePercent g %d\n", $1 * ($2 - $3), int($4 * 100 / $2) }'
}

# fsc_of MOUNTPOINT: the FSC column (yes/no) of the NFS volume mounted there.
fsc_of() {
  awk -v d="$(mountpoint -d "$1")" '$4 == d { print $NF }' /proc/fs/nfsfs/volumes
}

# fscache_counter FIELD: a counter of FS-Cache's "IO" line (rd or wr) in /proc/fs/fscache/stats, 0 if none.
fscache_counter() {
  awk -v f="$1=" '$1 == "IO" { for (i = 2; i <= NF; i++) if (index($i, f) == 1) print substr($i, length(f) + 1) }' \
    /proc/fs/fscache/stats 2>/dev/null | grep -m1 . || echo 0
}

# server_read_bytes MOUNTPOINT: bytes the NFS mount there has read from its server (serverreadbytes, the fifth field of
# its "bytes:" line in /proc/self/mountstats).
server_read_bytes() {
  awk -v m="$1" '$1 == "device" { on = ($5 == m) } on && $1 == "bytes:" { print $6; exit }' /proc/self/mountstats
}

# fscache_self_test MOUNTPOINT: whether FS-Cache serves reads of that NFS mount on this kernel. One file of it (64 KiB
# to 64 MiB) is read, FS-Cache's writes behind that read are let finish, the file alone is dropped from the page cache,
# and it is read again: the second read must cost the server less than half the file (the mount's own server-read
# counter, whatever the kernel counts as an FS-Cache read) and FS-Cache must count a read. A cache that stores but
# never serves passes every other check. Logs the result; returns 1 when the cache did not serve (0 when no file fits).
fscache_self_test() {
  local f n b w=-1 r
  f=$(find "$1" -xdev -maxdepth 4 -type f -size +64k -size -64M -print -quit 2>/dev/null) || true
  if [ -z "$f" ]; then log "cache self-test: no file of 64 KiB to 64 MiB under $1: not run"; return 0; fi
  n=$(stat -c %s "$f")
  cat "$f" >/dev/null || { warn "cache self-test: cannot read $f"; return 1; }
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    [ "$(fscache_counter wr)" != "$w" ] || break
    w=$(fscache_counter wr)
    sleep 1
  done
  dd if="$f" iflag=nocache count=0 status=none || { warn "cache self-test: cannot drop $f from the page cache"; return 1; }
  b=$(server_read_bytes "$1") r=$(fscache_counter rd)
  cat "$f" >/dev/null || { warn "cache self-test: cannot read $f again"; return 1; }
  b=$(($(server_read_bytes "$1") - b)) r=$(($(fscache_counter rd) - r))
  if ((2 * b < n && r > 0)); then
    log "cache self-test: FS-Cache served a re-read of $f ($n bytes): $b bytes from the server, $r FS-Cache reads"
  else
    warn "cache self-test: FS-Cache did not serve a re-read of $f ($n bytes): $b bytes from the server, $r FS-Cache reads"
    return 1
  fi
}
