#!/bin/bash
# The mirrors' sync (assets/lib/mirror.sh mirror_sync_one) run for real on this machine: fpart and rsync from
# the distribution, between two local directories, as root. It proves what the copy holds after each kind of change
# (content, addition, removal, rename across directories, a file that becomes a directory, odd names), that a full
# copy keeps the last good tree, that a missing source removes nothing, and that an unchanged tree copies nothing.
# What needs a real NFS origin and kernel (delegations, readers during a sync, the staleness bound) is in
# test/lab/mirror.lab.ts. Prints `mirror-sync: N passed, M failed` last.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

if ! command -v fpart >/dev/null || ! command -v rsync >/dev/null; then
  echo "setup: installing fpart and rsync"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fpart rsync >/dev/null
fi

work=$(mktemp -d)
cleanup() {
  umount "$work/small" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
passed=0 failed=0

check() {
  local what="$1"
  shift
  if "$@"; then
    echo "ok - $what"
    passed=$((passed + 1))
  else
    echo "not ok - $what"
    failed=$((failed + 1))
  fi
}

# sync ROOT: one mirror_sync_one of /efs/app from $work/src/app into ROOT/app, as the node runs it; output in
# $work/out, exit status returned.
# shellcheck disable=SC2034 # the variables are read by mirror_sync_one
sync() {
  (
    # shellcheck source=../../assets/lib/common.sh
    source assets/lib/common.sh
    # shellcheck source=../../assets/lib/mirror.sh
    source assets/lib/mirror.sh
    MIRROR_SOURCE="$work/src" MIRROR_ROOT="$1" MIRROR_STATE="$work/state"
    EFSC_EXPORT_PATH=/efs EFSC_MIRROR_WORKERS=4 EFSC_MIRROR_TIMEOUT_SEC=120 EFSC_MIRROR_SIZE_MB=1
    # Small parts, so that 4 jobs share even this tree.
    MIRROR_PART_FILES=7
    mkdir -p "$MIRROR_STATE"
    echo 0 >"$MIRROR_STATE/full"
    mirror_sync_one /efs/app
  ) >"$work/out" 2>&1
}

# same A B: A and B hold the same names, types, contents, modes and link targets.
same() {
  local d
  d=$(rsync -rlpcn --delete --itemize-changes --no-times "$1/" "$2/") || return 1
  [ -z "$d" ] || { echo "differs: $d" | head -n 5; return 1; }
}

fails() { ! "$@"; }

copied() { sed -n 's/.*(\([0-9]*\) files copied).*/\1/p' "$work/out"; }

src="$work/src/app" dst="$work/dst"
mkdir -p "$src/a/b/c" "$src/empty" "$src/with space" "$dst"
for i in $(seq 1 40); do printf 'file %s\n' "$i" >"$src/a/f$i"; done
for i in $(seq 1 10); do printf 'deep %s\n' "$i" >"$src/a/b/c/g$i"; done
printf 'odd\n' >"$src/with space/name with spaces"
printf 'nl\n' >"$src/a/new"$'\n'"line"
printf 'x\n' >"$src/.snapshot-like"
chmod 0640 "$src/a/f1"
ln -s a/f2 "$src/link"

check "first sync succeeds" sync "$dst"
check "the copy is the tree: names (spaces, a newline, .snapshot*), empty directories, modes, a symlink" same "$src" "$dst/app"
check "it says how many files it copied (53; the symlink is not a file)" test "$(copied)" = 53
check "the state file records the walk: $(cat "$work/state/app" 2>/dev/null)" \
  grep -qE '^[0-9]+ [0-9]+ 5[0-9]$' "$work/state/app"

check "a second sync of an unchanged tree copies nothing" sync "$dst"
check "  (0 files copied)" test "$(copied)" = 0

ino=$(stat -c %i "$dst/app/a/f3")
printf 'FILE 3\n' >"$src/a/f3"
touch -d '2001-01-01' "$src/a/f3"
printf 'added\n' >"$src/a/b/added"
rm "$src/a/f4"
rm -r "$src/a/b/c"
mv "$src/a/f5" "$src/with space/f5-renamed"
rm "$src/a/f6"
mkdir "$src/a/f6"
printf 'inside\n' >"$src/a/f6/inside"
check "after a change, an addition, removals (a file, a directory tree), a rename across directories and a file that became a directory" sync "$dst"
check "  the copy is the tree again" same "$src" "$dst/app"
check "  the changed file was written aside and renamed over the old one (a new inode: readers see old or new)" \
  test "$(stat -c %i "$dst/app/a/f3")" != "$ino"

# A copy that outgrows its space: the last good tree stays whole, nothing is removed, the flag says so.
mkdir -p "$work/small"
mount -t tmpfs -o size=1m efs-cache-test "$work/small"
check "a tree that fits 1 MiB syncs" sync "$work/small"
head -c 2M /dev/urandom >"$src/huge"
rm "$src/a/f7"
check "a tree that outgrows it fails" fails sync "$work/small"
check "  with the WARN line that names mirrorSize" grep -q 'does not fit in .* (1 MiB): serving the last copy; raise mirrorSize' "$work/out"
check "  and the full flag" test "$(cat "$work/state/full")" = 1
check "  nothing of the last copy was removed (a/f7 is still there)" test -f "$work/small/app/a/f7"
rm "$src/huge"

# A walk that fails (the source is gone) removes nothing and says so.
before=$(cd "$dst/app" && find . -printf '%p %i %s\n' | sort)
mv "$src" "$work/src/gone"
check "a sync whose source is not there fails" fails sync "$dst"
check "  with a WARN line" grep -q 'WARN: mirror /efs/app: .* serving the last copy' "$work/out"
check "  and the copy is untouched" test "$(cd "$dst/app" && find . -printf '%p %i %s\n' | sort)" = "$before"
mv "$work/src/gone" "$src"

echo "mirror-sync: $passed passed, $failed failed"
[ "$failed" = 0 ]
