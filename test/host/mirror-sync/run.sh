#!/bin/bash
# The mirrors' sync (assets/lib/mirror-sync.sh mirror_sync_one) run for real on this machine: find and rsync from
# the distribution, between two local directories, as root. It proves what the copy holds after each kind of change
# (content with a new mtime and with the old one kept, addition, removal, rename across directories, mode, symlink
# target, a file that becomes a directory and back, odd names), that a directory which replaces a file is made before
# the parallel jobs (none of which then finds the file in its way), that each sync compares its walk with the last good
# one and that a lost or emptied copy is copied whole again, that a failed sync (a full copy) keeps the last good tree
# and that the next sync repairs what it left, that a directory the sync cannot read empties its copy, that a missing
# source removes nothing, and that an unchanged tree starts no rsync; with strace, it counts the stat calls of an
# unchanged sync on each side. With a change marker (mirror_sync, the origin's mounts stubbed): an unchanged marker
# spares the walk and the fresh mount, a touched one, an absent one, a copy the record no longer fits and the end of
# EFSC_MIRROR_FULL_SEC each bring a walk, a publish during a walk is walked next time, a marker that does not answer
# is a failed sync.
# What needs a real NFS origin and kernel (delegations, readers during a sync, the staleness bound) is in
# test/heavy/lab/mirror.lab.ts. Beside these cases, which mostly wait, the property test over generated trees runs
# (property.sh: odd names, names that prefix others, each kind of change alone); its lines come after these and its
# counts join theirs. Prints `mirror-sync: N passed, M failed` last; KEEP=1 keeps the work directories.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."

if ! command -v rsync >/dev/null; then
  echo "setup: installing rsync"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rsync >/dev/null
fi

work=$(mktemp -d)
prop=$(mktemp)
bash test/host/mirror-sync/property.sh >"$prop" 2>&1 &
prop_pid=$!
cleanup() {
  umount "$work/small" 2>/dev/null || true
  if [ -n "$prop_pid" ]; then kill "$prop_pid" 2>/dev/null || true; fi
  rm -f "$prop"
  if [ -n "${KEEP:-}" ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
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
    # What the last sync said, so that a failure explains itself in the log.
    if [ -s "$work/out" ]; then sed 's/^/#   /' "$work/out" | tail -n 20; fi
  fi
}

# sync ROOT: one mirror_sync_one of /efs/app from $work/src/app into ROOT/app, as the node runs it, in a process of
# its own run by ${wrap[@]} (empty, strace, or capsh); output in $work/out, exit status returned.
cat >"$work/sync.sh" <<'EOF'
# shellcheck disable=SC2034 # the variables are read by mirror_sync_one
set -euo pipefail
source assets/lib/checkout.sh
MIRROR_SOURCE="$WORK/src" MIRROR_ROOT="$1" MIRROR_STATE="$WORK/state"
EFSC_EXPORT_PATH=/efs EFSC_MIRROR_WORKERS=4 EFSC_MIRROR_TIMEOUT_SEC=120 EFSC_MIRROR_SIZE_MB=1
# Small parts, so that 4 jobs share even this tree.
MIRROR_PART_FILES=7
mkdir -p "$MIRROR_STATE"
echo 0 >"$MIRROR_STATE/full"
mirror_sync_one /efs/app
EOF
# The syncs' rsync: the real one, after it notes in $work/in-the-way each directory of its job's list (or above an
# entry of it) that the copy holds as something else when the job starts. Two jobs that both find such a directory race
# to replace it, and the one that comes second fails ("could not make way for new directory").
mkdir -p "$work/shim"
cat >"$work/shim/rsync" <<'EOF'
#!/bin/bash
set -euo pipefail
list=
for a in "$@"; do case "$a" in --files-from=*) list=${a#--files-from=} ;; esac; done
if [ -n "$list" ]; then
  src=${*: -2:1} dst=${*: -1}
  while IFS= read -r -d '' p; do
    while [ "$p" != . ]; do
      if [ -d "$src/$p" ] && [ ! -L "$src/$p" ] && { [ -L "$dst/$p" ] || { [ -e "$dst/$p" ] && [ ! -d "$dst/$p" ]; }; }; then
        echo "$p" >>"$WORK/in-the-way"
      fi
      p=${p%/*}
    done
  done <"$list"
fi
exec /usr/bin/rsync "$@"
EOF
chmod +x "$work/shim/rsync"
wrap=()
sync() { WORK="$work" PATH="$work/shim:$PATH" "${wrap[@]}" bash "$work/sync.sh" "$1" >"$work/out" 2>&1; }
# made_way: no job since the last made_way found a directory of its list held as something else in the copy (the sync
# made it first).
made_way() {
  local w
  w=$(cat "$work/in-the-way" 2>/dev/null || true)
  rm -f "$work/in-the-way"
  [ -z "$w" ] || { echo "in the way: $(tr '\n' ' ' <<<"$w")"; return 1; }
}

# same A B: A and B hold the same names, types, contents, modes and link targets.
same() {
  local d
  d=$(rsync -rlpcn --delete --itemize-changes --no-times "$1/" "$2/") || return 1
  [ -z "$d" ] || { echo "differs: $d" | head -n 5; return 1; }
}

fails() { ! "$@"; }

copied() { sed -n 's/.*(\([0-9]*\) files copied).*/\1/p' "$work/out"; }
# walked: "full" or "compared", and how many entries the sync copied and removed, from its log line.
walked() { sed -n 's/.*(\([a-z]*\) walk: \([0-9]*\) entries copied, \([0-9]*\) removed)$/\1 \2 \3/p' "$work/out"; }

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

check "  a full walk: no record yet ($(walked))" test "$(walked)" = "full 60 0"

check "a second sync of an unchanged tree copies nothing" sync "$dst"
check "  (0 files copied; compared with the last walk: 0 entries copied, 0 removed)" test "$(copied) $(walked)" = "0 compared 0 0"

# The unchanged sync again, under strace: which programs ran, and the stat calls on each side (the sync's own
# find of the origin, and what it looks at in the copy: its root's identity and top-level names).
if command -v strace >/dev/null; then
  # shellcheck disable=SC2054 # strace's own comma-separated list
  wrap=(strace -f -qq -y -o "$work/trace" -e trace=execve,%stat,%lstat,%fstat,statx)
  check "an unchanged sync under strace" sync "$dst"
  wrap=()
  entries=$(find "$src" | wc -l) dirs=$(find "$src" -type d | wc -l)
  # -y names each fd's path: a call is on the origin's side if its line names $work/src, on the copy's if $work/dst.
  # A stat-like call's target: its path if absolute, else the path strace gives its directory fd (or the cwd) plus its
  # name. on PREFIX: how many targets are under PREFIX.
  targets() {
    sed -nE -e 's/^[0-9]+ +([a-z0-9]*stat[a-z0-9]*)\((AT_FDCWD|[0-9]+)<([^>]*)>, "([^"]*)".*/\1\t\3\t\4/p' \
      -e 's/^[0-9]+ +(fstat)\(([0-9]+)<([^>]*)>, .*/\1\t\3\t/p' "$work/trace" |
      awk -F '\t' '{ t = $3 ~ /^\// ? $3 : ($3 == "" ? $2 : $2 "/" $3); print $1 "\t" t }'
  }
  on() { targets | awk -F '\t' -v p="$1" 'index($2, p) == 1 { n++ } END { print n + 0 }'; }
  ssrc=$(on "$work/src/app") sdst=$(on "$work/dst/app")
  echo "# an unchanged sync of $entries entries ($dirs directories): $ssrc stat calls on the origin's side" \
    "($(awk -v a="$ssrc" -v b="$entries" 'BEGIN { printf "%.2f", a / b }') per entry), $sdst on the copy's side;" \
    "per call on the origin's side: $(targets | grep -F "$work/src/app" | cut -f 1 | sort | uniq -c | tr -s ' \n' ' ')"
  check "  it starts no rsync (programs: $(grep -oE 'execve\("[^"]*"' "$work/trace" | sed 's/.*\///;s/"//' | sort -u | tr '\n' ' '))" \
    fails grep -q 'execve("[^"]*/rsync"' "$work/trace"
  check "  one lstat per entry on the origin's side, and two more per directory (find's checks of each directory it enters)" \
    test "$ssrc" -ge "$entries" -a "$ssrc" -le $((entries + 2 * dirs + 2))
  check "  a handful of stat calls on the copy's side, whatever its size (its root: made sure of, its identity, its listing)" \
    test "$sdst" -ge 1 -a "$sdst" -le 4
else
  echo "# no strace here: the stat calls of an unchanged sync were not counted"
fi

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
check "  compared with the last walk: $(walked)" grep -q '(compared walk: ' "$work/out"
check "  the directory that replaced a file was made before the jobs, none of which found the file in its way" made_way

# Each kind of change alone, each caught by the comparison with the last walk.
# change WHAT EXPECT: one sync after the change made just before; the copy must be the tree again, with EXPECT
# ("<entries copied> <paths removed>") as the sync's own counts.
change() {
  check "$1" sync "$dst"
  check "  the copy is the tree again ($(walked))" same "$src" "$dst/app"
  check "  compared with the last walk, $2 (copied, removed)" test "$(walked)" = "compared $2"
}
sleep 0.01
printf 'FILE 9\n' >"$src/a/f9"
change "content of the same size, with a new mtime" "1 0"
check "  (that file alone: $(copied) file copied)" test "$(copied)" = 1

touch -r "$src/a/f10" "$work/ref"
printf 'FILE 10\n' >"$src/a/f10"
touch -r "$work/ref" "$src/a/f10"
check "content of the same size with the old mtime kept (touch -r): size and mtime as in the copy" \
  test "$(stat -c '%s %Y' "$src/a/f10")" = "$(stat -c '%s %Y' "$dst/app/a/f10")"
change "  synced: only its ctime shows it" "1 0"
check "  the copy has the new content" grep -q 'FILE 10' "$dst/app/a/f10"

printf 'new\n' >"$src/a/b/added2"
change "an addition (the file and its directory)" "2 0"
printf 'top\n' >"$src/top-added"
chmod 0750 "$src"
change "an addition at the mirror's root, whose mode changed too (the file and the root)" "2 0"
check "  that file alone is copied, not every entry of the root ($(copied) file copied)" test "$(copied)" = 1
check "  and the root's mode follows ($(stat -c %a "$dst/app"))" test "$(stat -c %a "$dst/app")" = 750
rm "$src/top-added"
chmod 0755 "$src"
change "  removed again" "1 1"
rm "$src/a/b/added2"
change "a removal" "1 1"
mv "$src/a/b/added" "$src/with space/added-moved"
change "a rename across directories (the new path and both directories; the old path removed)" "3 1"
chmod 0600 "$src/a/f11"
change "a mode" "1 0"
check "  (0600 in the copy)" test "$(stat -c %a "$dst/app/a/f11")" = 600
ln -sfn a/f3 "$src/link"
change "a symlink's target, of the same length (ln -sfn renames a new link over it: its directory changes too)" "2 0"
check "  (a/f3 in the copy)" test "$(readlink "$dst/app/link")" = a/f3
rm -r "$src/a/f6"
printf 'a file again\n' >"$src/a/f6"
change "the directory that was a file is a file again (its entry went with the directory: nothing to remove)" "2 0"
rm "$src/a/f6"
mkdir "$src/a/f6"
printf 'inside\n' >"$src/a/f6/inside"
change "  and a directory again" "3 0"
check "  (made before the jobs)" made_way

# A lost or emptied copy: the record no longer describes it, the sync copies the whole walk.
n=$(walked)
rm -rf "$dst/app"
check "a copy that was lost (its directory gone) is copied whole again" sync "$dst"
check "  the copy is the tree again ($(walked))" same "$src" "$dst/app"
check "  by a full walk" grep -q '(full walk: ' "$work/out"
find "$dst/app" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
check "a copy that was emptied (same directory) is copied whole again" sync "$dst"
check "  the copy is the tree again ($(walked))" same "$src" "$dst/app"
check "  by a full walk" grep -q '(full walk: ' "$work/out"
check "  and the next sync compares again" sync "$dst"
check "  ($(walked))" test "$(walked)" = "compared 0 0"
: "$n"

# A directory the walk cannot read (on an origin that squashes root): the walk lists it without its entries and its
# copy is emptied, as before; once readable again its entries come back. The walk's find runs as root without
# CAP_DAC_READ_SEARCH (a find of its own first in PATH); the rest of the sync as usual.
mkdir "$src/private"
printf 'secret\n' >"$src/private/s"
chown -R 65534:65534 "$src/private"
chmod 0700 "$src/private"
check "a private directory is copied" sync "$dst"
check "  with its file" test -f "$dst/app/private/s"
if command -v capsh >/dev/null; then
  mkdir -p "$work/bin"
  cat >"$work/bin/find" <<'EOF'
#!/bin/bash
if [ "$1 $2" = ". -xdev" ]; then
  exec capsh --drop=cap_dac_override,cap_dac_read_search -- -c 'exec /usr/bin/find "$@"' find "$@"
fi
exec /usr/bin/find "$@"
EOF
  chmod +x "$work/bin/find"
  wrap=(env "PATH=$work/bin:$PATH")
  check "a sync whose walk cannot read it succeeds" sync "$dst"
  check "  and empties its copy (the directory stays): $(walked)" test -d "$dst/app/private" -a ! -e "$dst/app/private/s"
  wrap=()
  check "a sync that can read it again" sync "$dst"
  check "  brings its file back" same "$src" "$dst/app"
else
  echo "# no capsh here: a directory the walk cannot read was not tried"
fi
rm -rf "$src/private"

# A copy that outgrows its space: the last good tree stays whole, nothing is removed, the flag says so. Meanwhile a
# directory became a file (renamed away) and a file was added; both jobs succeed, the one of the large file fails.
printf 'kept\n' >"$src/a/b/kept"
mkdir -p "$work/small"
mount -t tmpfs -o size=1m efs-cache-test "$work/small"
check "a tree that fits 1 MiB syncs" sync "$work/small"
check "  by a full walk: the record was for another copy" grep -q '(full walk: ' "$work/out"
check "  and the next sync compares" sync "$work/small"
check "  ($(walked))" test "$(walked)" = "compared 0 0"
head -c 2M /dev/urandom >"$src/huge"
rm "$src/a/f7"
mv "$src/a/b" "$src/a/b.away"
# Empty files: a file without data needs no page of the tmpfs, which the large file's job fills for a moment before it
# fails, so the other jobs' files are written whenever their jobs run (a file with data written in that moment failed
# too, about once in 20 runs on a busy host).
: >"$src/a/b"
: >"$src/a/stale"
# One more, so that the large file's job copies it alone (rsync copies a directory's files before its directories:
# with a/stale in its part, the large file's failure would end the job first).
: >"$src/a/stale2"
check "a tree that outgrows it fails" fails sync "$work/small"
check "  with the WARN line that names mirroring.size" grep -q 'does not fit in .* (1 MiB): serving the last copy; raise mirroring.size' "$work/out"
check "  and the full flag" test "$(cat "$work/state/full")" = 1
check "  nothing of the last copy was removed (a/f7 is still there)" test -f "$work/small/app/a/f7"
check "  the other jobs ran: a/b is a file in the copy (a/b/kept went with the directory), a/stale is there" \
  test -f "$work/small/app/a/b" -a -f "$work/small/app/a/stale"
rm "$src/huge" "$src/a/b" "$src/a/stale" "$src/a/stale2"
mv "$src/a/b.away" "$src/a/b"
check "the next sync, after the origin went back (a/b a directory again, its entries with their old ctime; a/stale gone)" \
  sync "$work/small"
check "  the copy is the tree again ($(walked))" same "$src" "$work/small/app"
check "  (a/b/kept is back though its record did not change, a/stale and a/f7 are gone)" \
  test -f "$work/small/app/a/b/kept" -a ! -e "$work/small/app/a/stale" -a ! -e "$work/small/app/a/f7"
check "  compared with the last good walk and what the failed sync may have copied" grep -q '(compared walk: ' "$work/out"
check "  a/b, a file in the copy, was made a directory before the jobs" made_way
check "  and no dirty paths are left" test ! -e "$work/state/.walk/app/dirty"

# A walk that fails (the source is gone) removes nothing and says so.
before=$(cd "$dst/app" && find . -printf '%p %i %s\n' | sort)
mv "$src" "$work/src/gone"
check "a sync whose source is not there fails" fails sync "$dst"
check "  with a WARN line" grep -q 'WARN: mirror /efs/app: .* serving the last copy' "$work/out"
check "  and the copy is untouched" test "$(cd "$dst/app" && find . -printf '%p %i %s\n' | sort)" = "$before"
mv "$work/src/gone" "$src"

# The change marker (mirror_sync with EFSC_MIRROR_MARKER): mirror_sync itself, with the origin's mounts stubbed (the
# sync's fresh mount and the marker's kept mount are the source directory; each fresh mount is counted), into a copy
# and state of their own. A sync that does not walk leaves the copy as it was: a change made without touching the
# marker is not copied, which proves no walk of the origin ran.
cat >"$work/msync.sh" <<'EOF'
# shellcheck disable=SC2034 # the variables are read by mirror_sync
set -euo pipefail
source assets/lib/checkout.sh
MIRROR_SOURCE="$WORK/src" MIRROR_ROOT="$WORK/mdst" MIRROR_STATE="$WORK/mstate"
EFSC_EXPORT_PATH=/efs EFSC_MIRROR_PATHS=/efs/app EFSC_MIRROR_WORKERS=4 EFSC_MIRROR_TIMEOUT_SEC=120 EFSC_MIRROR_SIZE_MB=1
EFSC_MIRROR_MARKER=.published EFSC_MIRROR_FULL_SEC=${FULL_SEC:-3600} EFSC_MOUNT_TIMEOUT_SEC=2
mirror_mounts() { mkdir -p "$MIRROR_ROOT" "$MIRROR_STATE"; echo fresh >>"$WORK/fresh-mounts"; }
mirror_marker_dir() { echo "$WORK/src${1#"$EFSC_EXPORT_PATH"}"; }
mirror_marker_mount() { :; }
mirror_source_umount() { :; }
mirror_sync
EOF
msync() { WORK="$work" "${wrap[@]}" bash "$work/msync.sh" >"$work/out" 2>&1; }
fresh() { if [ -f "$work/fresh-mounts" ]; then wc -l <"$work/fresh-mounts"; else echo 0; fi; }
nowalk() { grep -qE '^efs-cache: mirror /efs/app: marker unchanged, no walk \(last walk [0-9]+s ago\)$' "$work/out"; }
mdst="$work/mdst/app" marker="$src/.published"

check "with a marker configured but absent, a sync walks" msync
check "  the copy is the tree ($(walked))" same "$src" "$mdst"
check "  and the next sync walks again: an absent marker never spares a walk" msync
check "  ($(walked))" test "$(walked)" = "compared 0 0"
check "  (mounted afresh for each: $(fresh))" test "$(fresh)" = 2
printf 'v1\n' >"$marker"
check "the publisher makes the marker: a sync walks" msync
check "  and copies it, and the root whose listing it changed ($(walked))" test "$(walked)" = "compared 2 0"
printf 'unmarked\n' >"$src/a/unmarked"
n0=$(fresh) line0=$(cat "$work/mstate/app")
sleep 1
check "an unchanged marker: the sync succeeds" msync
check "  without a walk, and says so: $(cat "$work/out")" nowalk
check "  nothing mounted afresh" test "$(fresh)" = "$n0"
check "  a change made without touching the marker is not copied (no walk of the origin)" test ! -e "$mdst/a/unmarked"
read -r t0 _ e0 <<<"$line0"
read -r t1 s1 e1 <<<"$(cat "$work/mstate/app")"
check "  the state line says fresh as now, 0 s, the entries kept ($line0 -> $t1 $s1 $e1)" \
  test "$t1" -gt "$t0" -a "$s1" = 0 -a "$e1" = "$e0"
check "  and so does MirrorAgeSeconds ($(MIRROR_STATE="$work/mstate" MIRROR_ROOT="$work/mdst" EFSC_MIRROR_PATHS=/efs/app \
  EFSC_EXPORT_PATH=/efs bash -c 'source assets/lib/checkout.sh; MIRROR_STATE=$0 MIRROR_ROOT=$1; mirror_metrics_read' \
  "$work/mstate" "$work/mdst" | grep MirrorAgeSeconds))" \
  test "$(EFSC_MIRROR_PATHS=/efs/app EFSC_EXPORT_PATH=/efs bash -c 'source assets/lib/checkout.sh
    MIRROR_STATE=$0 MIRROR_ROOT=$1; mirror_metrics_read' "$work/mstate" "$work/mdst" | sed -n 's/^MirrorAgeSeconds g //p')" -le 1
printf 'v2\n' >"$marker"
check "the publisher touches the marker: a sync walks" msync
check "  and copies the change it had not seen: the file, its directory, the marker ($(walked))" \
  test -f "$mdst/a/unmarked" -a "$(walked)" = "compared 3 0"
check "  the copy is the tree" same "$src" "$mdst"
check "  the next sync does not walk" msync
check "  ($(cat "$work/out"))" nowalk

# The safety interval: once EFSC_MIRROR_FULL_SEC has passed since the last walk began, a walk whatever the marker.
rm "$src/a/unmarked"
sleep 2
FULL_SEC=1
export FULL_SEC
check "after EFSC_MIRROR_FULL_SEC (1 s) a sync walks though the marker is unchanged" msync
check "  and removes what the publisher removed without touching the marker ($(walked))" \
  test ! -e "$mdst/a/unmarked" -a "$(walked)" = "compared 1 1"
unset FULL_SEC

# A copy the record no longer describes: a walk whatever the marker.
find "$mdst" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
check "an emptied copy with an unchanged marker: a sync walks" msync
check "  the whole tree ($(walked))" grep -q '(full walk: ' "$work/out"
check "  the copy is the tree" same "$src" "$mdst"

# A publish during the walk: the publisher adds a file and touches the marker once the walk has listed the tree (a
# find of its own in PATH publishes when the walk's find ends). That walk keeps the marker read before it, so the
# next sync sees the marker changed and walks.
mkdir -p "$work/bin"
cat >"$work/bin/find" <<'EOF'
#!/bin/bash
rc=0
/usr/bin/find "$@" || rc=$?
if [ "$1 $2" = ". -xdev" ]; then
  printf 'late\n' >"$PUBLISH/a/late" && printf 'v3\n' >"$PUBLISH/.published"
fi
exit "$rc"
EOF
chmod +x "$work/bin/find"
printf 'v2b\n' >"$marker"
wrap=(env "PATH=$work/bin:$PATH" "PUBLISH=$src")
check "a sync during which the publisher publishes and touches the marker" msync
wrap=()
check "  walked, without the file published after its walk ($(walked))" test ! -e "$mdst/a/late" -a "$(walked)" = "compared 1 0"
check "  the next sync walks (the marker is not the one read before the last walk)" msync
check "  and copies what the publish added: the file, its directory, the marker ($(walked))" test -f "$mdst/a/late" -a "$(walked)" = "compared 3 0"
check "  the copy is the tree" same "$src" "$mdst"
check "  the one after that does not walk" msync
check "  ($(cat "$work/out"))" nowalk

# A marker that cannot be read (an origin that does not answer: the stat outlives the mount timeout) is a failed sync.
cat >"$work/bin/find" <<'EOF'
#!/bin/bash
if [ "$2 $3" = "-maxdepth 0" ]; then sleep 30; fi
exec /usr/bin/find "$@"
EOF
f0=$(cat "$work/mstate/failures" 2>/dev/null || echo 0) n0=$(fresh)
wrap=(env "PATH=$work/bin:$PATH")
check "a marker whose stat does not answer: the sync fails" fails msync
wrap=()
check "  with a WARN line: $(grep WARN "$work/out")" \
  grep -qE '^efs-cache: WARN: mirror /efs/app: cannot read the change marker .*no answer in 2s.*: serving the last copy$' "$work/out"
check "  counted as a failure, nothing mounted afresh" test "$(cat "$work/mstate/failures")" = $((f0 + 1)) -a "$(fresh)" = "$n0"
check "  and the copy is still the tree" same "$src" "$mdst"

# A first sync longer than its timeout (mirror_sync --first, as at boot, the origin's mounts stubbed): each rsync job
# takes 2 s (an rsync of its own first in PATH), two at a time, on parts of 7 entries, against a timeout of 5 s, so
# each try copies two waves of parts and is cut in the third. Each try keeps what it copied and the next continues
# from it, until the tree is whole. Then an origin where no job ever finishes: the second try keeps nothing more than
# the first, and the first sync fails.
cat >"$work/first.sh" <<'EOF'
# shellcheck disable=SC2034 # the variables are read by mirror_sync
set -euo pipefail
source assets/lib/checkout.sh
MIRROR_SOURCE="$WORK/src" MIRROR_ROOT="$WORK/fdst" MIRROR_STATE="$WORK/fstate" MIRROR_PART_FILES=7
EFSC_EXPORT_PATH=/efs EFSC_MIRROR_PATHS=/efs/app EFSC_MIRROR_WORKERS=2 EFSC_MIRROR_TIMEOUT_SEC=$TIMEOUT EFSC_MIRROR_SIZE_MB=1
EFSC_MOUNT_TIMEOUT_SEC=2
mirror_mounts() { mkdir -p "$MIRROR_ROOT" "$MIRROR_STATE"; }
mirror_source_umount() { :; }
mirror_sync --first
EOF
mkdir -p "$work/slow"
cat >"$work/slow/rsync" <<'EOF'
#!/bin/bash
for a in "$@"; do if [[ "$a" == --files-from=* ]]; then sleep "$JOB_SEC"; fi; done
exec /usr/bin/rsync "$@"
EOF
chmod +x "$work/slow/rsync"
first() { WORK="$work" TIMEOUT="$1" JOB_SEC="$2" PATH="$work/slow:$PATH" bash "$work/first.sh" >"$work/out" 2>&1; }
files=$(find "$src" -type f | wc -l)
check "a first sync that one try cannot copy whole (jobs of 2 s, a timeout of 5 s) completes" first 5 2
check "  in more than one try, each continuing from the last: $(grep -c 'the next try continues' "$work/out") cut" \
  grep -qE '^efs-cache: mirror /efs/app: first sync, try 1 ended with [1-9][0-9]* of [0-9]+ entries copied; the next try continues from them$' "$work/out"
check "  the last try copied what was left, not the tree again ($(copied) of $files files)" test "$(copied)" -lt "$files"
check "  the copy is the tree" same "$src" "$work/fdst/app"
check "  no dirty paths are left" test ! -e "$work/fstate/.walk/app/dirty"
rm -rf "$work/fdst" "$work/fstate"
check "a first sync where no job ever finishes fails" fails first 3 30
check "  once a try kept nothing more than the one before (the first keeps the root's attributes alone)" \
  grep -qE '^efs-cache: WARN: mirror /efs/app: first sync, try 2 kept nothing more than the last \(1 of [0-9]+ entries\): giving up$' "$work/out"
check "  with the FATAL line" grep -q 'FATAL: the first sync of the mirrors failed' "$work/out"
rm -rf "$work/fdst" "$work/fstate"

# The property test's lines and counts (none if it ended without its closing line: one failure).
wait "$prop_pid" || true
prop_pid=
cat "$prop"
if line=$(grep -E '^mirror-sync-property: [0-9]+ passed, [0-9]+ failed$' "$prop"); then
  read -r _ p _ f _ <<<"$line"
  passed=$((passed + p)) failed=$((failed + f))
else
  echo "not ok - the property test over generated trees ended without its closing line"
  failed=$((failed + 1))
fi

echo "mirror-sync: $passed passed, $failed failed"
[ "$failed" = 0 ]
