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
# Run from a checkout, source the libraries (lib/checkout.sh); in user data the code holds them, before this script.
if ! declare -F die >/dev/null; then
  # shellcheck source-path=SCRIPTDIR source=../lib/checkout.sh
  source "$(dirname "${BASH_SOURCE[0]}")/../lib/checkout.sh"
fi

SELF=/usr/local/lib/efs-cache/client.sh

check_parameters() {
  need EFSC_NFS_SERVER "$RE_HOST" 'a DNS name or an IP address'
  need EFSC_NFS_PATH "$RE_PATH" 'an absolute path'
  need EFSC_MOUNT_POINT "$RE_DIR" 'an absolute path other than /'
  need EFSC_MOUNT_TYPE '^(nfs|nfs4|efs)$' 'nfs, nfs4 or efs'
  need EFSC_MOUNT_OPTIONS "$RE_OPTS" 'a comma-separated list without spaces'
  [[ ",$EFSC_MOUNT_OPTIONS," =~ ,fsc[,=] ]] || die "EFSC_MOUNT_OPTIONS must contain fsc"
  need EFSC_MOUNT_TIMEOUT_SEC '^[1-9][0-9]{0,3}$' 'seconds, 1-9999'
  fscache_check
  need EFSC_CACHE_SOURCE '^(instance-store|ebs)$' 'instance-store or ebs'
  need EFSC_MIRROR_ROOT '^/[A-Za-z0-9._-]+$' 'a directory under /'
  need EFSC_MIRROR_MOUNTS "^( ?$EFSC_MIRROR_ROOT/[A-Za-z0-9._/-]+)*\$" "paths under $EFSC_MIRROR_ROOT, or empty"
  if [ -n "$EFSC_MIRROR_MOUNTS" ]; then
    need EFSC_MIRROR_MOUNT_POINT "$RE_DIR" 'an absolute path other than /'
    need EFSC_MIRROR_MOUNT_OPTIONS "$RE_OPTS" 'mount options'
  fi
  check_mount_paths
  need EFSC_WARM_PATHS '^( ?/[A-Za-z0-9._/-]+)*$' 'absolute paths, or empty'
  need EFSC_WARM_WORKERS '^[1-9][0-9]{0,2}$' 'readers, 1-999'
  need EFSC_WARM_TIMEOUT_SEC '^[1-9][0-9]{0,4}$' 'seconds, 1-99999'
  need EFSC_WARM_MAX_MIB '^[1-9][0-9]{0,7}$' 'MiB, 1-99999999'
  local w
  for w in $EFSC_WARM_PATHS; do
    [[ "$w/" != */./* && "$w/" != */../* ]] || die "EFSC_WARM_PATHS: '$w' has a . or .. segment"
    [ -n "$(warm_mount_of "$w")" ] || die "EFSC_WARM_PATHS: '$w' is under neither $EFSC_MOUNT_POINT nor a mirror's mount point"
  done
  metrics_check
}

# mirror_mount_point EXPORT: where the mirror served at EXPORT (EFSC_MIRROR_ROOT/<path>) is mounted.
mirror_mount_point() { echo "$EFSC_MIRROR_MOUNT_POINT${1#"$EFSC_MIRROR_ROOT"}"; }

# warm_mount_of PATH: the mount PATH is read through, the fsc mount or the mirror it is at or under (nothing: neither).
warm_mount_of() {
  local p m mp
  p=$(tr -s / <<<"$1/")
  if [[ "$p" == "$EFSC_MOUNT_POINT/"* ]]; then
    echo "$EFSC_MOUNT_POINT"
    return
  fi
  for m in $EFSC_MIRROR_MOUNTS; do
    mp=$(mirror_mount_point "$m")
    if [[ "$p" == "$mp/"* ]]; then
      echo "$mp"
      return
    fi
  done
}

# The directories mounted on (the cache, the fsc mount, each mirror): none may have a . or .. segment (a mirror at
# /mnt/mirror/../../etc would cover /etc), and none may be another's directory or lie inside it.
check_mount_paths() {
  local -a paths=("$EFSC_CACHE_DIR" "$EFSC_MOUNT_POINT")
  local m p q i j
  for m in $EFSC_MIRROR_MOUNTS; do paths+=("$(mirror_mount_point "$m")"); done
  for ((i = 0; i < ${#paths[@]}; i++)); do
    p=$(tr -s / <<<"${paths[i]}/")
    [[ "$p" != */./* && "$p" != */../* ]] || die "the mount path '${paths[i]}' has a . or .. segment"
    for ((j = 0; j < i; j++)); do
      q=$(tr -s / <<<"${paths[j]}/")
      [[ "$p" != "$q"* && "$q" != "$p"* ]] || die "the mount paths '${paths[j]}' and '${paths[i]}' are the same or one is inside the other"
    done
  done
}

install_boot_unit() {
  install_self "$SELF"
  put_file /usr/local/bin/fscache-status 0755 <<<$'#!/bin/sh\nexec '"$SELF --status" || true
  fscache_boot_unit efs-cache-client.service "rebuild or reassemble the FS-Cache disk, start cachefilesd" "$SELF --boot"
}

# The mount is bounded by EFSC_MOUNT_TIMEOUT_SEC (mount_within, lib/common.sh).
mount_nfs() {
  local src="$EFSC_NFS_SERVER:$EFSC_NFS_PATH" mp="$EFSC_MOUNT_POINT"
  if [ "$EFSC_MOUNT_TYPE" = efs ] && ! command -v mount.efs >/dev/null; then die "mount type efs needs amazon-efs-utils"; fi
  mkdir -p "$mp"
  fstab_set "$mp" "$src $mp $EFSC_MOUNT_TYPE $EFSC_MOUNT_OPTIONS,_netdev,nofail 0 0"
  if ! mountpoint -q "$mp"; then
    log "mounting $src at $mp"
    mount_within "$EFSC_MOUNT_TIMEOUT_SEC" "$src at $mp" "$mp" || die "could not mount $src at $mp in ${EFSC_MOUNT_TIMEOUT_SEC}s"
  fi
  [ "$(fsc_of "$mp")" = yes ] || die "$mp is mounted without FS-Cache (/proc/fs/nfsfs/volumes: FSC no)"
  log "$mp is mounted with FS-Cache"
}

# The fleet's mirrors (EFSC_MIRROR_MOUNTS): plain NFSv4.1 mounts of the same server, read-only, without fsc.
mount_mirrors() {
  local m src mp
  for m in $EFSC_MIRROR_MOUNTS; do
    src="$EFSC_NFS_SERVER:$m" mp=$(mirror_mount_point "$m")
    mkdir -p "$mp"
    fstab_set "$mp" "$src $mp nfs4 $EFSC_MIRROR_MOUNT_OPTIONS,_netdev,nofail 0 0"
    if ! mountpoint -q "$mp"; then
      log "mounting the mirror $src at $mp"
      mount_within "$EFSC_MOUNT_TIMEOUT_SEC" "the mirror $src at $mp" "$mp" ||
        die "could not mount the mirror $src at $mp in ${EFSC_MOUNT_TIMEOUT_SEC}s"
    fi
  done
}

# warm: reads every file under EFSC_WARM_PATHS once through its mount (the fsc mount fills the page cache and FS-Cache,
# a mirror the page cache), EFSC_WARM_WORKERS readers at once, at most EFSC_WARM_MAX_MIB (the files find lists after
# that are left unread) and at most EFSC_WARM_TIMEOUT_SEC in all. Past a bound it warns and returns: a slow warm
# delays readiness, it never fails the boot. A path that is missing, or whose mount is not there, fails it: reading
# the empty directory under a failed mount would pass for a warm.
warm() {
  [ -n "$EFSC_WARM_PATHS" ] || return 0
  local -a paths
  local p mp list chosen f size rc=0 t0=$SECONDS end=$((SECONDS + EFSC_WARM_TIMEOUT_SEC))
  local max=$((EFSC_WARM_MAX_MIB * 1048576)) bytes=0 files=0 left=0
  read -ra paths <<<"$EFSC_WARM_PATHS"
  for p in "${paths[@]}"; do
    mp=$(warm_mount_of "$p")
    mountpoint -q "$mp" || die "cannot warm $p: $mp is not mounted"
    [ -e "$p" ] || die "cannot warm $p: it does not exist"
  done
  log "warming ${paths[*]}: $EFSC_WARM_WORKERS readers, at most $EFSC_WARM_MAX_MIB MiB in ${EFSC_WARM_TIMEOUT_SEC}s"
  list=$(mktemp) chosen=$(mktemp)
  timeout -k 5 "$EFSC_WARM_TIMEOUT_SEC" find "${paths[@]}" -type f -printf '%s %p\0' >"$list" || rc=$?
  case "$rc" in
    0) ;;
    124 | 137) warn "warming: listing the files took more than ${EFSC_WARM_TIMEOUT_SEC}s; reading what was listed" ;;
    *) warn "warming: find reported errors (exit $rc); reading what it listed" ;;
  esac
  # The files in the order listed, up to the size bound.
  while IFS= read -r -d '' f; do
    size=${f%% *}
    if ((left == 0 && bytes + size <= max)); then
      bytes=$((bytes + size)) files=$((files + 1))
      printf '%s\0' "${f#* }"
    else
      left=$((left + 1))
    fi
  done <"$list" >"$chosen"
  if ((left > 0)); then warn "warming: $left files past the bound of $EFSC_WARM_MAX_MIB MiB left unread"; fi
  rc=0
  if ((end - SECONDS > 0)); then
    timeout -k 5 "$((end - SECONDS))" xargs -0r -n 32 -P "$EFSC_WARM_WORKERS" cat <"$chosen" >/dev/null || rc=$?
  else
    rc=124
  fi
  rm -f "$list" "$chosen"
  case "$rc" in
    0) log "warmed ${paths[*]}: $files files, $((bytes / 1048576)) MiB in $((SECONDS - t0))s" ;;
    124 | 137) warn "warming stopped at its bound of ${EFSC_WARM_TIMEOUT_SEC}s: $files files ($((bytes / 1048576)) MiB) were to be read, not all were" ;;
    *) warn "warming: some of $files files ($((bytes / 1048576)) MiB) could not be read (exit $rc), in $((SECONDS - t0))s" ;;
  esac
}

status() {
  local t s
  echo "cache $EFSC_CACHE_DIR (label $EFSC_CACHE_LABEL, tag $EFSC_CACHE_TAG):"
  df -h --output=source,size,used,avail,pcent "$EFSC_CACHE_DIR" || true
  echo "cachefilesd: $(systemd_ctl is-active "$FSCACHE_UNIT"), pid $(systemd_ctl show -p MainPID --value "$FSCACHE_UNIT"), cache" \
    "$(cache_active 2>/dev/null && echo active || echo NOT ACTIVE)"
  echo "FS-Cache counters (IO rd: pages read from the cache, wr: written to it):"
  grep -E '^(Cookies|Acquire|IO|NoSpace|RdHelp)' /proc/fs/fscache/stats || true
  findmnt -rn -t nfs,nfs4 -o TARGET,SOURCE | while read -r t s; do
    echo "NFS $t from $s: FSC $(fsc_of "$t")"
  done
}

# The client's metrics for lib/metrics.sh: its disk cache's (lib/fscache.sh).
metrics_read() { fscache_metrics_read; }

# The packages of the first boot (lib/fscache.sh adds SPAL for cachefilesd on Amazon Linux 2023).
install_packages() {
  fscache_packages "$([ "$OS_PKG" = dnf ] && echo nfs-utils || echo nfs-common)"
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
    --cachefilesd-heap)
      cachefilesd_heap_check "${2:-}"
      return
      ;;
    --warm)
      warm
      return
      ;;
    --boot) ;;
    "")
      detect_os
      install_packages
      install_boot_unit
      ;;
    *) die "unknown argument '$1' (use --boot, --warm, --status, --metrics or --cachefilesd-heap PID)" ;;
  esac
  if [ "${1:-}" != --status ]; then fscache_up; fi
  if [ -z "${1:-}" ]; then
    mount_nfs
    mount_mirrors
    metrics_setup
    warm
    log "client ready: $EFSC_MOUNT_POINT, cached on $EFSC_CACHE_DIR ($EFSC_CACHE_SOURCE; fscache-status)"
  fi
}

main "$@"
