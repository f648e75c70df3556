#!/bin/bash
set -euo pipefail
# One sync of the mirrors (see mirror.sh).
# A sync walks the origin once (find, one record of attributes per entry), compares the walk with the last good one,
# and copies only what is new or changed, EFSC_MIRROR_WORKERS rsync jobs at a time on parts of at most 500 paths,
# because copying small files over NFS is latency-bound (details at mirror_sync_one). rsync never runs with
# --inplace: each changed file is written aside and renamed over the old one, so a reader sees the old or the new
# file, never a mix. Removals come last, from the old walk's record (no walk of the copy, no second walk of the
# origin), once every job has succeeded: a file renamed on the origin is never missing from the copy in between. Each
# sync reads a mount of the origin of its own, made afresh for the sync and unmounted after it (nosharecache: nothing
# the last sync or the re-export cached is reused, so the staleness bound is the interval plus two syncs), whose
# attribute cache outlives the sync (actimeo): each of the walk's lstats is answered from the attributes that came
# with the entry's name in the READDIR reply, so an unchanged tree costs the origin its READDIRs and no request per
# file (close-to-open still revalidates each file rsync opens). The first sync after boot completes before nfs-server starts (it is
# part of --warm, which nfs-server requires): a node never serves an empty mirror. A first sync that its timeout cuts
# is continued by further tries for as long as each copies more (mirror_first_sync). Later syncs run on a timer; a
# failed one removes nothing, keeps the copy served and is recorded (metrics below, a WARN line in the journal); the
# next one continues from what it copied (mirror_keep).
# Needs common.sh, mirror.sh and mirror-storage.sh; the S3 mirrors' sync is in mirror-s3.sh.

# mirror_awk PROGRAM ARG...: the awk program lib/awk/mirror-PROGRAM.awk (dirs, redo, remove or keep: each file says
# what it reads and prints), with the functions of lib/awk/records.awk, on ARG... (-v assignments, then files). The
# code holds each awk file as the here-document of a function efs_cache_awk_<name> (lib/instance/user-data.ts; from a
# checkout, lib/checkout.sh defines them from the files).
mirror_awk() {
  local p="$1"
  shift
  awk -f <(efs_cache_awk_records) -f <("efs_cache_awk_mirror_$p") "$@"
}

# mirror_sync_one PATH [MARKER]: one sync of one mirror; state in MIRROR_STATE/<name>: "<last success> <seconds> <entries>".
# One walk of the origin per sync: find prints every entry's path, type, size, mtime, ctime, mode, owner and link
# target in one record (one lstat per entry, from the directory listing: on an NFS mount whose attribute cache
# outlives the walk the kernel answers it from the READDIR reply's attributes). The walk of the last good sync is kept
# in MIRROR_STATE/.walk/<name>/record, sorted; this sync copies only the entries whose record is new or differs (ctime
# catches a copy that kept the old mtime; type, size, mode, owner and link target the rest), and removes, last, the
# paths of the old record that the walk no longer lists. Nothing of the copy is walked or stat'ed for that beyond
# its root: an unchanged tree starts no rsync. The record is trusted only for the copy it was made for (same boot, same
# file system and root inode, every top-level name of the record present); otherwise the sync copies the whole walk
# and removes what a walk of the copy holds beyond it, as the first sync of a boot does.
# A failed sync removes nothing. Once its walk is done, what it copied is kept (mirror_keep): the record becomes the
# walk's records of what the copy now holds as the walk saw it, and every other entry of the copy is dirty
# (.walk/<name>/dirty): the next sync copies each of them again if the walk lists it, removes it if not, and copies the
# entries under a dirty path that was not a directory (rsync --force replaced a directory there). So a sync cut by its
# timeout is continued by the next one, never begun again.
# MARKER: the change marker's value read before this sync (mirror_marker), kept with the record if the sync succeeds.
mirror_sync_one() {
  # Byte order for sort and comm, English messages for the walk's errors.
  local -x LC_ALL=C
  local rel="${1#"$EFSC_EXPORT_PATH"}" rc=0 t0=$SECONDS t="$MIRROR_STATE/sync" e n left mode=compared st stamp k r per
  local src dst w0 t1
  w0=$(date +%s) t1=$(date +%s.%N)
  st="$MIRROR_STATE/.walk/$(systemd-escape -p "$rel")" src="$MIRROR_SOURCE$rel" dst="$MIRROR_ROOT$rel"
  timeout -k 10 "$EFSC_MIRROR_TIMEOUT_SEC" test -d "$src" ||
    { warn "mirror $1: $src is not a directory on the origin, or the origin does not answer: serving the last copy"; return 1; }
  rm -rf "$t"
  mkdir -p "$t" "$dst" "$st"
  # The walk (-xdev: one file system). A directory that cannot be read is listed without its entries, whose copies are
  # then removed, and an entry that vanishes while it is walked is not listed: find says so and exits 1, which
  # counts as a walk. Any other error, or an end by the timeout, is a failed walk.
  (cd "$src" && timeout -k 10 "$EFSC_MIRROR_TIMEOUT_SEC" find . -xdev -printf '%p//%y %s %T@ %C@ %m %U %G %l\0') 2>"$t/err" |
    sort -z >"$t/walk" 2>>"$t/err" || rc=$?
  if [ "$rc" = 1 ] && ! grep -qv -e ': Permission denied$' -e ': No such file or directory$' "$t/err"; then rc=0; fi
  # Without the root's own record the walk did not happen.
  if [ "$rc" = 0 ] && ! grep -qz '^\.//d ' "$t/walk"; then
    rc=1
    echo "the walk listed nothing" >>"$t/err"
  fi
  if [ "$rc" = 0 ]; then
    stamp=$(mirror_stamp "$dst")
    if ! mirror_record_fits "$st" "$dst" "$stamp"; then
      mode=full
      rm -f "$st/record" "$st/copy" "$st/dirty"
    fi
    if [ "$mode" = full ]; then
      # Everything the walk listed (removals: below, from a walk of the copy once the jobs are done).
      cp "$t/walk" "$t/plus"
    else
      # plus: records that are new or changed; minus: old records that changed or are gone.
      comm -z -13 "$st/record" "$t/walk" >"$t/plus"
      comm -z -23 "$st/record" "$t/walk" >"$t/minus"
      comm -z -23 <(sed -z 's,//.*,,' "$t/minus" | sort -z) <(sed -z 's,//.*,,' "$t/plus" | sort -z) >"$t/gone"
      if [ -s "$st/dirty" ]; then
        # Paths a failed sync may have copied: again if listed (and what is under one that was not a directory),
        # removed if not.
        mirror_awk redo -v gone="$t/gone" "$st/dirty" "$t/walk" >>"$t/plus"
        sort -zu -o "$t/plus" "$t/plus"
        sort -zu -o "$t/gone" "$t/gone"
      fi
      # What to remove: top-most paths only, and none under an entry that is now a file (rsync --force removed it).
      mirror_awk remove "$t/plus" "$t/gone" >"$t/remove"
    fi
    sed -z 's,//.*,,' "$t/plus" >"$t/copy"
    k=$(tr -cd '\0' <"$t/copy" | wc -c)
    # The copies, EFSC_MIRROR_WORKERS rsync jobs at a time, each of a part of at most MIRROR_PART_FILES paths (fewer
    # when that leaves a worker idle). Each job copies exactly its list (--files-from creates the listed entries'
    # directories; -d: a listed directory itself, not its content), -I: whatever the sizes and times (the walk chose
    # them: a copy that kept the old mtime has the old size and mtime), never --inplace: each file is written aside and
    # renamed over the old one; --force lets a file replace a directory. The mirror's root is not in the lists: with
    # -d, rsync copies the entries of a directory listed as "." (the root, whose record changes with any entry added or
    # removed there), all of them with -I; its own attributes are copied apart, every top-level entry excluded.
    left=$((EFSC_MIRROR_TIMEOUT_SEC + t0 - SECONDS))
    ((left > 0)) || left=1
    if grep -qzx '\.' "$t/copy"; then
      grep -zvx '\.' "$t/copy" >"$t/copy.entries" || true
      mv "$t/copy.entries" "$t/copy"
      timeout -k 30 "$left" rsync -lptgoD -d --numeric-ids --exclude='/*' "$src/" "$dst/" 2>>"$t/err" || rc=$?
    fi
    if [ "$rc" = 0 ] && [ -s "$t/copy" ]; then
      mirror_make_way "$t/plus" "$dst" 2>>"$t/err" || rc=$?
    fi
    if [ "$rc" = 0 ] && [ -s "$t/copy" ]; then
      per=$(tr -cd '\0' <"$t/copy" | wc -c)
      per=$(((per + EFSC_MIRROR_WORKERS - 1) / EFSC_MIRROR_WORKERS))
      ((per <= MIRROR_PART_FILES)) || per=$MIRROR_PART_FILES
      split -t '\0' -l "$per" -a 6 "$t/copy" "$t/part."
      find "$t" -name 'part.*' -print0 | timeout -k 30 "$left" xargs -0r -P "$EFSC_MIRROR_WORKERS" -I{} \
        rsync -lptgoD -d -I --numeric-ids --force --out-format=%i --files-from={} --from0 "$src/" "$dst/" \
        >"$t/out" 2>>"$t/err" || rc=$?
    fi
    : >>"$t/out"
    # A full sync's removals: what a walk of the copy, once the jobs are done, holds beyond the walk of the origin.
    if [ "$rc" = 0 ] && [ "$mode" = full ]; then
      comm -z -23 <(find "$dst" -mindepth 1 -printf './%P\0' | sort -z) \
        <(sed -z 's,//.*,,' "$t/walk" | sort -z) >"$t/remove"
    fi
  fi
  if [ "$rc" != 0 ]; then
    e=$(cat "$t/err")
    if [ -n "${stamp:-}" ]; then mirror_keep "$st" "$t" "$dst" "$stamp" "$t1" "$mode"; fi
    if [[ "$e" == *"No space left on device"* ]]; then
      echo 1 >"$MIRROR_STATE/full"
      warn "mirror $1 does not fit in $MIRROR_ROOT ($EFSC_MIRROR_SIZE_MB MiB): serving the last copy; raise mirroring.size"
    else
      warn "mirror $1: sync failed (exit $rc): serving the last copy: $(tail -n 3 <<<"$e" | tr '\n' ' ')"
    fi
    return 1
  fi
  # Removals, once every job has succeeded.
  r=$(tr -cd '\0' <"$t/remove" | wc -c)
  [ ! -s "$t/remove" ] || (cd "$dst" && xargs -0r rm -rf -- <"$t/remove") ||
    { mirror_keep "$st" "$t" "$dst" "$stamp" "$t1" "$mode"; warn "mirror $1: removals failed: serving the copy as it is"; return 1; }
  # The new record, for this copy.
  mv "$t/walk" "$st/record"
  echo "$stamp" >"$st/copy"
  rm -f "$st/dirty"
  # With a change marker: its value read before the walk began (a publish during the walk shows next time) and the
  # walk's start, for mirror_unchanged.
  if [ -n "${2:-}" ]; then
    echo "$2" >"$st/marker"
    echo "$w0" >"$st/walked"
  fi
  n=$(($(tr -cd '\0' <"$st/record" | wc -c) - 1))
  echo "$(date +%s) $((SECONDS - t0)) $n" >"$MIRROR_STATE/$(systemd-escape -p "$rel")"
  log "mirror $1: synced $n entries ($(grep -c '^>f' "$t/out") files copied) in $((SECONDS - t0))s ($mode walk: $k entries copied, $r removed)"
}

# mirror_make_way RECORDS DST: makes each directory of RECORDS (walk records) that would replace something else in the
# copy at DST (a file, a symlink), before the jobs. Left to them, the job that copies the directory and the job of an
# entry under it (parts of their own, run side by side) each removed what stood in the way, and the second removal
# failed once the first had made the directory ("could not make way for new directory"), and the sync with it. Made
# 0700, so that nothing under it is readable before its job sets its owner and mode.
mirror_make_way() {
  local -x LC_ALL=C
  local p way=()
  while IFS= read -r -d '' p; do
    if [[ -L "$2/$p" || (-e "$2/$p" && ! -d "$2/$p") ]]; then way+=("$p"); fi
  done < <(mirror_awk dirs "$1")
  ((${#way[@]})) || return 0
  (cd "$2" && printf '%s\0' "${way[@]}" | xargs -0 rm -f -- && printf '%s\0' "${way[@]}" | xargs -0 mkdir -m 0700 --)
}

# mirror_stamp DST: the identity of the copy at DST that a record is written for (boot, file system, root inode).
mirror_stamp() { echo "$(cat /proc/sys/kernel/random/boot_id) $(stat -c '%d %i' "$1")"; }

# mirror_record_fits STATE DST STAMP: whether the record of the last good walk (STATE/record) describes the copy at DST,
# whose mirror_stamp is STAMP: it was written for this copy and the copy still holds every top-level name it lists (a
# lost or emptied copy does not: a tmpfs made again, a copy removed by hand). The record is sorted as whole records,
# `./NAME//...`: cut at //, its names are sorted again, since a name that another one extends with a byte below /
# (index and index.php) sorts after it as a record and before it as a name, and comm then finds the names unsorted
# and never says that the copy holds them all (every sync was a full copy).
mirror_record_fits() {
  local -x LC_ALL=C
  [ -s "$1/record" ] && [ -n "$3" ] && [ "$(cat "$1/copy" 2>/dev/null)" = "$3" ] &&
    [ -z "$(comm -z -23 <(grep -z '^\./[^/]*//' "$1/record" | sed -z 's,//.*,,' | sort -z) \
      <(mirror_names "$2" | sort -z) | head -c 1)" ]
}

# mirror_names DIR: ./NAME of each entry of DIR, NUL-terminated, from its listing alone (find would stat each one).
mirror_names() {
  local o n=() p
  o=$(shopt -p nullglob dotglob || true)
  shopt -s nullglob dotglob
  n=("$1"/*)
  eval "$o"
  for p in "${n[@]}"; do printf './%s\0' "${p##*/}"; done
}

# mirror_keep STATE TMP DST STAMP START MODE: after a sync that failed once its walk was done (TMP/walk), what it
# copied is kept for the next sync to continue from. The new record (STATE/record, for the copy STAMP) holds the
# walk's record of each entry that is unchanged since the last good record (a compared sync), or that this sync wrote
# (its ctime in the copy is START or later: rsync renamed it into place or set its attributes) and that the copy holds
# as the walk saw it: type, size (a directory's aside), mtime, mode, owner, group, link target. Every other entry of
# the copy joins the dirty ones (STATE/dirty): one cut mid-copy (rsync writes a file aside and renames it whole), one
# the walk no longer lists, a temporary file of a killed rsync. An entry the walk lists that the copy lacks is in
# neither, so the next sync copies it.
mirror_keep() {
  local -x LC_ALL=C
  local old=/dev/null
  [ "$6" != compared ] || [ ! -s "$1/record" ] || old="$1/record"
  (cd "$3" && find . -xdev -printf '%C@ %p//%y %s %T@ %m %U %G %l\0') >"$2/have" 2>/dev/null || return 0
  : >"$2/kept.dirty"
  mirror_awk keep -v start="$5" -v dirty="$2/kept.dirty" "$old" "$2/have" "$2/walk" >"$2/kept" || return 0
  mv "$2/kept" "$1/record"
  echo "$4" >"$1/copy"
  touch "$1/dirty"
  sort -zu "$2/kept.dirty" "$1/dirty" >"$1/dirty.new" && mv "$1/dirty.new" "$1/dirty"
}

# The change marker (EFSC_MIRROR_MARKER): a file under each mirror's root that the publisher updates after each
# publish. Its stat is read on a mount of the mirror's own directory of the origin (so the path to the marker
# crosses no directory of the origin above it), kept between syncs, with no attribute cache (actimeo=0: the stat asks
# the origin) and a superblock of its own (nosharecache: nothing the re-export or the syncs cached). A
# mirror whose marker is as the last good walk saw it, walked less than EFSC_MIRROR_FULL_SEC ago, is not walked: the
# sync costs the origin that stat. A publisher that forgets the marker has its change copied by the next walk that
# the interval forces: within EFSC_MIRROR_FULL_SEC plus a sync (plus the clients' attribute cache).
# mirror_marker_dir PATH: where the marker mount of mirror PATH is (MIRROR_MARKER/<escaped path>).
mirror_marker_dir() { echo "$MIRROR_MARKER/$(systemd-escape -p "${1#"$EFSC_EXPORT_PATH"}")"; }

# mirror_marker_mount PATH: mounts the origin's directory of mirror PATH at mirror_marker_dir if it is not mounted
# (findmnt reads the mount table; a stat of a hard mount whose server is gone would hang).
mirror_marker_mount() {
  local d
  d=$(mirror_marker_dir "$1")
  findmnt -rn --mountpoint "$d" >/dev/null && return 0
  mkdir -p "$d"
  timeout -k 10 "$EFSC_MOUNT_TIMEOUT_SEC" mount -t "$EFSC_ORIGIN_MOUNT_TYPE" -o "$EFSC_MIRROR_MARKER_OPTIONS" \
    "$EFSC_ORIGIN_SERVER:${EFSC_ORIGIN_PATH%/}${1#"$EFSC_EXPORT_PATH"}" "$d" || return 1
  findmnt -rn --mountpoint "$d" >/dev/null
}

# mirror_marker PATH: prints the marker of mirror PATH as "<inode> <size> <mtime> <ctime>" (one lstat of it on the
# marker's mount), or "absent" if the origin says there is none (no such file, or a component that is not a
# directory); fails, with the reason on stderr, on any other error or when the origin does not answer within the
# mount timeout (a hard mount of an origin that is gone would hang the stat).
mirror_marker() {
  local -x LC_ALL=C
  local f out err="$MIRROR_STATE/.marker-find" rc=0 why
  f="$(mirror_marker_dir "$1")/$EFSC_MIRROR_MARKER"
  out=$(cd / && timeout -k 10 "$EFSC_MOUNT_TIMEOUT_SEC" find "$f" -maxdepth 0 -printf '%i %s %T@ %C@\n' 2>"$err") || rc=$?
  if [ "$rc" = 0 ] && [[ "$out" =~ ^[0-9]+\ [0-9]+\ [0-9.]+\ [0-9.]+$ ]]; then
    echo "$out"
  elif [ "$rc" = 1 ] && [ -z "$out" ] && grep -qE ': (No such file or directory|Not a directory)$' "$err" &&
    ! grep -qvE ': (No such file or directory|Not a directory)$' "$err"; then
    echo absent
  else
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "no answer in ${EFSC_MOUNT_TIMEOUT_SEC}s" >>"$err"; fi
    why=$(tail -n 2 "$err" | tr '\n' ' ')
    echo "cannot read the change marker $f (exit $rc): ${why% }" >&2
    return 1
  fi
}

# mirror_unchanged PATH MARKER: whether mirror PATH needs no walk: its marker (MARKER, just read) is not absent and is
# the one read before the last good walk, that walk began less than EFSC_MIRROR_FULL_SEC ago, and its record still
# describes the copy (mirror_record_fits) with nothing left dirty by a failed sync. If so, the mirror's state line
# says it is as fresh as now (its seconds 0, its entries kept) and the log says why there was no walk.
mirror_unchanged() {
  local rel="${1#"$EFSC_EXPORT_PATH"}" st f w now t s n
  st="$MIRROR_STATE/.walk/$(systemd-escape -p "$rel")" f="$MIRROR_STATE/$(systemd-escape -p "$rel")"
  now=$(date +%s)
  [ "$2" != absent ] && [ "$(cat "$st/marker" 2>/dev/null)" = "$2" ] || return 1
  w=$(cat "$st/walked" 2>/dev/null) && [[ "$w" =~ ^[0-9]+$ ]] && ((now - w < EFSC_MIRROR_FULL_SEC)) || return 1
  [ ! -s "$st/dirty" ] && [ -d "$MIRROR_ROOT$rel" ] && mirror_record_fits "$st" "$MIRROR_ROOT$rel" "$(mirror_stamp "$MIRROR_ROOT$rel")" ||
    return 1
  read -r t s n 2>/dev/null <"$f" && [[ "$n" =~ ^[0-9]+$ ]] || return 1
  : "$t" "$s"
  echo "$now 0 $n" >"$f"
  log "mirror $1: marker unchanged, no walk (last walk $((now - w))s ago)"
}

# mirror_sync [--first]: syncs every mirror once (never two syncs at a time). --first: only mirrors not synced since
# boot, and a failure is fatal (the node must not serve an empty or partial first copy). With a change marker, a
# mirror whose marker is unchanged is not walked (mirror_unchanged); if none needs a walk, nothing is mounted afresh.
# The S3 mirrors (lib/mirror-s3.sh) after the path mirrors, each listed at every sync; they need no origin mount.
mirror_sync() {
  local p m i bad=0 todo=() walk=() marks=() s3=() name fsid uri region
  mirrors || return 0
  mkdir -p "$MIRROR_STATE"
  exec 9>"$MIRROR_STATE/.lock"
  flock 9
  for p in $EFSC_MIRROR_PATHS; do
    if [ "${1:-}" = --first ] && [ -f "$MIRROR_STATE/$(systemd-escape -p "${p#"$EFSC_EXPORT_PATH"}")" ]; then continue; fi
    todo+=("$p")
  done
  while read -r name fsid uri region; do
    if [ "${1:-}" = --first ] && [ -f "$MIRROR_STATE/$(systemd-escape -p "/$name")" ]; then continue; fi
    s3+=("$name $uri $region")
  done < <([ -z "${EFSC_MIRROR_S3_NAMES:-}" ] || mirror_s3_each)
  : "$fsid"
  # The mirrors' port follows the node's interfaces (mirror_routes), checked at each sync.
  if mirror_ns_exists; then (mirror_routes) || warn "mirrors: cannot update the rules of TCP $MIRROR_PORT"; fi
  ((${#todo[@]} + ${#s3[@]})) || return 0
  echo 0 >"$MIRROR_STATE/full"
  if [ -z "${EFSC_MIRROR_MARKER:-}" ]; then
    walk=("${todo[@]}")
  else
    # Each marker is read before its mirror's walk, and kept with the walk's record only if the walk succeeds.
    for p in "${todo[@]}"; do
      if ! mirror_marker_mount "$p"; then
        warn "mirror $p: cannot mount the origin at $(mirror_marker_dir "$p"): serving the last copy"
        bad=1
      elif ! m=$(mirror_marker "$p" 2>"$MIRROR_STATE/.marker-err"); then
        warn "mirror $p: $(cat "$MIRROR_STATE/.marker-err"): serving the last copy"
        bad=1
      elif ! mirror_unchanged "$p" "$m"; then
        walk+=("$p") marks+=("$m")
      fi
    done
  fi
  if ((${#walk[@]})); then
    if ! mirror_mounts; then
      [ "${1:-}" != --first ] || die "could not mount the origin for the mirrors in ${EFSC_MOUNT_TIMEOUT_SEC}s"
      for p in "${walk[@]}"; do warn "mirror $p: cannot mount the origin at $MIRROR_SOURCE: serving the last copy"; done
      bad=1
    else
      for i in "${!walk[@]}"; do
        if [ "${1:-}" = --first ]; then
          mirror_first_sync "${walk[i]}" "${marks[i]:-}" || bad=1
        else
          mirror_sync_one "${walk[i]}" "${marks[i]:-}" || bad=1
        fi
      done
    fi
  fi
  mirror_source_umount
  if ((${#s3[@]})); then
    mirror_storage
    # shellcheck disable=SC2086 # name, URI and region: words without spaces (mirror_s3_check)
    for p in "${s3[@]}"; do mirror_s3_sync_one $p || bad=1; done
  fi
  if [ "$bad" = 1 ]; then
    echo $(($(cat "$MIRROR_STATE/failures" 2>/dev/null || echo 0) + 1)) >"$MIRROR_STATE/failures"
    [ "${1:-}" != --first ] || die "the first sync of the mirrors failed (see the WARN lines above)"
    return 1
  fi
}

# mirror_first_sync PATH MARK: the first sync of a mirror after boot, which the node does not serve without. A try
# that fails keeps what it copied (mirror_keep) and the next try continues from it, for as long as each try keeps
# more of the tree than the one before: a tree that one sync's timeout (EFSC_MIRROR_TIMEOUT_SEC) cannot copy whole is
# copied in several tries and served once it is whole. A try that keeps nothing more (an origin that stopped
# answering, a walk alone longer than the timeout) or a mirror that does not fit ends the first sync, as failed.
mirror_first_sync() {
  local st n=0 m try=1 all
  st="$MIRROR_STATE/.walk/$(systemd-escape -p "${1#"$EFSC_EXPORT_PATH"}")"
  until mirror_sync_one "$1" "$2"; do
    m=0 all=0
    if [ -s "$st/record" ]; then m=$(tr -cd '\0' <"$st/record" | wc -c); fi
    if [ -s "$MIRROR_STATE/sync/walk" ]; then all=$(tr -cd '\0' <"$MIRROR_STATE/sync/walk" | wc -c); fi
    if [ "$(cat "$MIRROR_STATE/full" 2>/dev/null)" = 1 ] || ((m <= n)); then
      ((try == 1)) || warn "mirror $1: first sync, try $try kept nothing more than the last ($m of $all entries): giving up"
      return 1
    fi
    log "mirror $1: first sync, try $try ended with $m of $all entries copied; the next try continues from them"
    n=$m try=$((try + 1))
  done
}
