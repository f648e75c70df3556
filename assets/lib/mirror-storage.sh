#!/bin/bash
set -euo pipefail
# The mirrors' storage (see mirror.sh): the file system the copies live on and the origin mounts of the syncs.
# Needs common.sh and mirror.sh.

# The file system of the copies (mirror_storage), and the sync's own origin mount made afresh (a hard mount: a sync
# that hangs is ended by its timeout).
mirror_mounts() {
  mirror_storage
  # A mount left by a sync that was killed goes first: its attributes may be older than this sync.
  mirror_source_umount
  mkdir -p "$MIRROR_SOURCE"
  timeout -k 10 "$EFSC_MOUNT_TIMEOUT_SEC" mount -t "$EFSC_ORIGIN_MOUNT_TYPE" -o "$EFSC_MIRROR_SOURCE_OPTIONS" \
    "$EFSC_ORIGIN_SERVER:$EFSC_ORIGIN_PATH" "$MIRROR_SOURCE" || return 1
}

# The file system of the copies. A tmpfs is resized in place; a new size of the disk storage applies at the next boot.
mirror_storage() {
  local s="size=${EFSC_MIRROR_SIZE_MB}m" r
  mkdir -p "$MIRROR_ROOT" "$MIRROR_STATE"
  if ! mountpoint -q "$MIRROR_ROOT"; then
    if [ "$EFSC_MIRROR_STORAGE" = disk ]; then mirror_disk; else
      mount -t tmpfs -o "$s,mode=0755" efs-cache-mirrors "$MIRROR_ROOT" || die "cannot mount a tmpfs at $MIRROR_ROOT"
    fi
    # Every mirror's root first, in order, on the new file system: the file handle of an export's root holds its
    # inode number (it is not the file system's root), which is then the same at every boot and on every node, so
    # clients' mounts outlive a reboot or a replacement of the node.
    while read -r r _; do mkdir -p "$MIRROR_ROOT$r"; done < <(mirror_each)
  elif [ "$EFSC_MIRROR_STORAGE" = memory ] && [[ ",$(findmnt -no OPTIONS "$MIRROR_ROOT")," != *",size=$((EFSC_MIRROR_SIZE_MB * 1024))k,"* ]]; then
    mount -o "remount,$s" "$MIRROR_ROOT" || warn "cannot resize $MIRROR_ROOT to $EFSC_MIRROR_SIZE_MB MiB"
  fi
}

# mirror_source_ops [DIR/]: the origin operations of the sync's mount, or of every mount under DIR (their per-op
# counts in /proc/self/mountstats, lines of a tab, the operation right-aligned and its count first; each of these
# mounts has a superblock of its own), 0 if none is mounted. (mirror-metrics.sh passes DIR.)
# shellcheck disable=SC2120
mirror_source_ops() {
  awk -v m="${1:-$MIRROR_SOURCE}" '$1 == "device" { on = (m ~ /\/$/ ? index($5, m) == 1 : $5 == m) }
    on && /^[\t ]+[A-Z_]+: [0-9]/ { n += $2 }
    END { printf "%d\n", n }' /proc/self/mountstats
}

# Unmounts the sync's origin mount, if mounted, and adds its operations to MIRROR_STATE/origin-ops (a reader of the
# metric in between sees the counter go back, which it skips, never a count twice). findmnt
# reads the mount table (a stat of a hard mount whose server is gone would hang); a lazy unmount never waits for it.
mirror_source_umount() {
  local n
  findmnt -rn --mountpoint "$MIRROR_SOURCE" >/dev/null || return 0
  n=$(mirror_source_ops "$MIRROR_SOURCE")
  umount -l "$MIRROR_SOURCE" || { warn "mirrors: cannot unmount $MIRROR_SOURCE"; return 0; }
  echo $(($(cat "$MIRROR_STATE/origin-ops" 2>/dev/null || echo 0) + n)) >"$MIRROR_STATE/origin-ops"
}

# The disk storage: an ext4 of EFSC_MIRROR_SIZE_MB in an image on the disk cache's file system (beside cachefilesd's
# cache/ and graveyard/), made afresh (the first sync of the boot fills it), of at most half that file system so that
# the disk cache keeps the rest: fallocate reserves its blocks, one inode per 4 KiB (small files), no journal (nothing
# in it outlives a boot), a fixed hash seed (on a large file system ext4 spreads top-level directories by a hash of
# their name: with the same seed the mirrors' roots get the same inode numbers every time). A loop mount detaches its
# device when unmounted. The image's blocks may also sit in the page cache under the ext4's own: clean pages, read
# once, that the kernel reclaims first.
mirror_disk() {
  local i="$EFSC_CACHE_DIR/efs-cache-mirror.img"
  (($(df -BM --output=size "$EFSC_CACHE_DIR" | tr -dc 0-9) >= 2 * EFSC_MIRROR_SIZE_MB)) ||
    die "mirroring.size ($EFSC_MIRROR_SIZE_MB MiB) is more than half of the disk cache at $EFSC_CACHE_DIR"
  rm -f "$i"
  fallocate -l "${EFSC_MIRROR_SIZE_MB}M" "$i" && mkfs.ext4 -qF -m 0 -i 4096 -O ^has_journal -E hash_seed="$(mirror_each | awk 'NR == 1 { print $2 }')" "$i" &&
    mount -o loop,noatime "$i" "$MIRROR_ROOT" && return
  die "cannot make the mirrors' ext4 at $i"
}
