#!/bin/bash
# A property test of the mirrors' sync (assets/lib/mirror-sync.sh mirror_sync_one) over generated trees, with real find
# and rsync between local directories, as root. Each tree comes from a seed (a generator of its own, the same on every
# bash): names of 1 to 255 bytes holding any byte a name may hold (1 to 255 but /), drawn mostly from the bytes that
# sort around / (. - , + space tab newline and the control bytes), from UTF-8 and from bytes that are not UTF-8; names
# that are a sibling's name plus more (index and index.php, extensions and extensions-core) or a cut of one; shapes
# wide, deep and mixed; files empty and not, modes, symlinks (dangling, absolute, with odd bytes in their targets),
# hard links, FIFOs and empty directories. For each tree:
#   - the first sync copies it whole (a full walk: every entry, every file) and the copy is the tree;
#   - an unchanged sync compares its walk with the last one and copies nothing: no rsync starts, and (with strace) the
#     origin's side sees one walk (one stat call per entry, two more per directory at most), the copy's a handful;
#   - each kind of change, made alone, is copied alone: the sync's own counts of entries copied and paths removed are
#     those the change makes (the entry, the directories whose listing it changed), and the copy is the tree again;
#   - a last unchanged sync copies nothing again.
# Every byte a name may hold appears in the names of any 6 seeds in a row (each inserts its share of the 254).
# Run by run.sh, whose closing line adds its counts, or alone:
#   bash test/host/mirror-sync/property.sh                   the default trees: seeds 1 to 6
#   PROP_SEED=7 PROP_TREES=1 bash test/host/mirror-sync/...  one tree again, as a failure names it
#   PROP_TREES=200 bash test/host/mirror-sync/property.sh    a longer search
# A failure prints the seed, the sync's output, how the copy differs and the tree's names (bash's $'...' quoting).
# Prints `mirror-sync-property: N passed, M failed` last; KEEP=1 keeps the work directory.
set -euo pipefail
# Bytes, not characters: names are bytes, and sort, comm, sed and bash's ${#...} then agree on them.
export LC_ALL=C
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."

trees=${PROP_TREES:-6} seed0=${PROP_SEED:-1}
[[ "$trees" =~ ^[1-9][0-9]*$ && "$seed0" =~ ^[1-9][0-9]*$ ]] || { echo "PROP_TREES and PROP_SEED: positive integers" >&2; exit 2; }
if ! command -v rsync >/dev/null; then
  echo "setup: installing rsync"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rsync >/dev/null
fi

P=$(mktemp -d)
export P
cleanup() { if [ -n "${KEEP:-}" ]; then echo "kept: $P" >&2; else rm -rf "$P"; fi; }
trap cleanup EXIT
passed=0 failed=0 started=$SECONDS

# The generator: Park-Miller's (16807's successor, 48271), in bash's own arithmetic, so that a seed is the same tree on
# every machine. rnd N: R, a number in [0, N).
rng=1
rnd() {
  rng=$((rng * 48271 % 2147483647))
  R=$((rng % $1))
}
seed_rng() {
  rng=$((($1 * 2654435761) % 2147483646 + 1))
  rnd 2
  rnd 2
}

# BYTE[b]: the byte b (1 to 255) as a string. ALL: every byte a name may hold, in order.
declare -a BYTE ALL
for ((b = 1; b < 256; b++)); do
  printf -v hex '%02x' "$b"
  printf -v 'BYTE[b]' '%b' "\\x$hex"
  ((b == 47)) || ALL+=("$b")
done
# Bytes that sort around / (0x2f): below it, the space, tab, newline, the control bytes and !"#$%&'()*+,-.; above
# it, 0 and :. The ones a prefix's extension starts with, mostly below /.
AROUND=(32 9 10 1 2 27 31 33 34 35 36 37 38 39 40 41 42 43 44 45 46 48 58 127)
EXTEND=(46 45 32 10 9 1 44 43 95 48 126 200)
# Characters of UTF-8 (é, ü, ß, 日本, an emoji, e and a combining accent, alef, a zero-width joiner, a byte order
# mark) and bytes that are not UTF-8 alone.
UTF8=($'\xc3\xa9' $'\xc3\xbc' $'\xc3\x9f' $'\xe6\x97\xa5\xe6\x9c\xac' $'\xf0\x9f\x98\x80' $'e\xcc\x81' $'\xd7\x90'
  $'\xe2\x80\x8d' $'\xef\xbb\xbf')
ALNUM=abcdefghijklmnopqrstuvwxyz0123456789

# gen_char: C, one character of a name.
gen_char() {
  rnd 100
  if ((R < 35)); then
    rnd 36
    C=${ALNUM:R:1}
  elif ((R < 57)); then
    rnd ${#AROUND[@]}
    C=${BYTE[AROUND[R]]}
  elif ((R < 64)); then
    rnd 32
    C=${BYTE[R == 0 ? 127 : R]}
  elif ((R < 78)); then
    rnd ${#UTF8[@]}
    C=${UTF8[R]}
  elif ((R < 88)); then
    rnd 128
    C=${BYTE[128 + R]}
  else
    rnd ${#ALL[@]}
    C=${BYTE[ALL[R]]}
  fi
}

# gen_name DIR: NAME, a name not yet in DIR (1 to 255 bytes, fewer deep down so that paths stay under PATH_MAX): a
# sibling's name with more after it (its first byte mostly one that sorts below /), a cut of a sibling's name, or
# characters of gen_char; with the next byte of SWEEP (this seed's share of the 254) put in somewhere.
gen_name() {
  local dir=$1 sibs=() s len max=255 i
  if ((${#dir} > 1500)); then max=40; fi
  sibs=("$dir"/.* "$dir"/*)
  sibs=("${sibs[@]##*/}")
  while :; do
    NAME=
    rnd 100
    if ((R < 30 && ${#sibs[@]} > 2)); then
      rnd ${#sibs[@]}
      s=${sibs[R]}
      [[ "$s" != . && "$s" != .. && "$s" != '*' && "$s" != '.*' ]] || continue
      rnd 10
      if ((R < 8)); then
        rnd ${#EXTEND[@]}
        NAME=$s${BYTE[EXTEND[R]]}
        rnd 4
        for ((i = 0; i < R; i++)); do gen_char; NAME+=$C; done
      elif ((${#s} > 1)); then
        rnd $((${#s} - 1))
        NAME=${s:0:R+1}
      fi
    else
      rnd 100
      if ((R < 3)); then
        rnd 156
        len=$((100 + R))
      else
        rnd 10
        len=$((1 + R))
      fi
      while ((${#NAME} < len)); do gen_char; NAME+=$C; done
    fi
    NAME=${NAME:0:max}
    if ((${#SWEEP[@]})); then
      NAME=${NAME:0:max-1}
      rnd $((${#NAME} + 1))
      NAME=${NAME:0:R}${BYTE[SWEEP[0]]}${NAME:R}
    fi
    [[ -n "$NAME" && "$NAME" != . && "$NAME" != .. && ! -e "$dir/$NAME" && ! -L "$dir/$NAME" ]] || continue
    if ((${#SWEEP[@]})); then SWEEP=("${SWEEP[@]:1}"); fi
    return 0
  done
}

# content N: CONTENT, N bytes that say which tree and entry they are (the same for the same seed).
content() {
  printf -v CONTENT 'seed %s entry %s %*s' "$seed" "$made" 4000 x
  CONTENT=${CONTENT:0:$1}
}

# gen_entry DIR DEPTH: one entry of a random kind in DIR (a directory's own entries per the tree's shape).
gen_entry() {
  local dir=$1 depth=$2 p n
  gen_name "$dir"
  p="$dir/$NAME" made=$((made + 1))
  rnd 100
  if ((R < 48)); then
    rnd 10
    if ((R == 0)); then n=0; elif ((R < 8)); then rnd 40; n=$((1 + R)); else rnd 3000; n=$((100 + R)); fi
    content "$n"
    printf '%s' "$CONTENT" >"$p"
    rnd 8
    if ((R == 0)); then chmod 0600 "$p"; elif ((R == 1)); then chmod 0755 "$p"; elif ((R == 2)); then chmod 0444 "$p"; fi
  elif ((R < 68)); then
    mkdir -- "$p"
    gen_dir "$p" $((depth + 1))
  elif ((R < 76)); then
    mkdir -- "$p"
  elif ((R < 90)); then
    gen_target "$dir"
    ln -s -- "$TARGET" "$p"
  elif ((R < 96)) && [ -n "${FIRST_FILE:-}" ] && [ -f "$FIRST_FILE" ]; then
    ln -- "$FIRST_FILE" "$p"
  else
    mkfifo -- "$p"
  fi
  if [ -f "$p" ] && [ -z "${FIRST_FILE:-}" ]; then FIRST_FILE=$p; fi
}

# gen_target DIR: TARGET, a symlink's target: a sibling, a path up and down, an absolute path, or odd bytes (a
# newline, //, spaces), dangling or not.
gen_target() {
  # Its names are not entries: they keep this seed's share of the bytes for the names.
  local sibs=() SWEEP=()
  rnd 5
  case $R in
    0)
      sibs=("$1"/*)
      rnd ${#sibs[@]}
      TARGET=${sibs[R]##*/}
      ;;
    1) gen_name "$1" && TARGET="../$NAME/x" ;;
    2) gen_name "$1" && TARGET="/nonexistent//$NAME" ;;
    3) gen_name "$1" && TARGET="$NAME"$'\n'"// two  spaces" ;;
    *) gen_name "$1" && TARGET=$NAME ;;
  esac
}

# gen_dir DIR DEPTH: DIR's entries, per SHAPE: wide (a root of 30 to 70 entries, shallow), deep (a chain of 8 to 24
# directories, each with a few more), mixed (fewer entries further down, 5 levels at most). At most 160 entries a tree.
gen_dir() {
  local dir=$1 depth=$2 n i
  case $SHAPE in
    wide) if ((depth == 0)); then rnd 41; n=$((30 + R)); elif ((depth < 2)); then rnd 12; n=$R; else n=0; fi ;;
    deep)
      if ((depth < CHAIN)); then
        gen_name "$dir"
        mkdir -- "$dir/$NAME"
        made=$((made + 1))
        gen_dir "$dir/$NAME" $((depth + 1))
      fi
      rnd 4
      n=$R
      ;;
    *) if ((depth < 5)); then rnd $((9 - depth)); n=$((R + (depth == 0 ? 4 : 0))); else n=0; fi ;;
  esac
  for ((i = 0; i < n && made < 160; i++)); do
    if [ "$SHAPE" = deep ] && ((depth < CHAIN)); then
      # The chain's own levels: files, links and empty directories beside the next level, no subtrees of their own.
      gen_name "$dir"
      made=$((made + 1))
      rnd 4
      case $R in
        0) mkdir -- "$dir/$NAME" ;;
        1) gen_target "$dir" && ln -s -- "$TARGET" "$dir/$NAME" ;;
        *) content $((R * 7)) && printf '%s' "$CONTENT" >"$dir/$NAME" ;;
      esac
    else
      gen_entry "$dir" "$depth"
    fi
  done
}

# pick FIND-ARGS...: PICK, one of the entries of the source (./path) that find selects, or "" if none; sorted first, so
# that a seed picks the same one everywhere.
pick() {
  local a=()
  mapfile -t -d '' a < <(cd "$S" && find . "$@" -print0 | sort -z)
  PICK=
  if ((${#a[@]})); then
    rnd ${#a[@]}
    PICK=${a[R]}
  fi
}
# pick_tree: PICK, a directory other than the root with no hard link in its subtree (its removal or move changes
# nothing outside it); made, with a file, if there is none.
pick_tree() {
  local all=() a=() d
  mapfile -t -d '' all < <(cd "$S" && find . -mindepth 1 -type d -print0 | sort -z)
  for d in "${all[@]}"; do
    if [ -z "$(find "$S/$d" -type f -links +1 -print -quit)" ]; then a+=("$d"); fi
  done
  if ((${#a[@]} == 0)); then
    gen_name "$S"
    mkdir -- "$S/$NAME"
    printf 'made\n' >"$S/$NAME/f"
    run_sync
    a=("./$NAME")
  fi
  rnd ${#a[@]}
  PICK=${a[R]}
}
# pick_file [FIND-ARGS...]: PICK, a regular file with no other link (its change changes no other path's record);
# made if there is none.
pick_file() {
  pick -type f -links 1 "$@"
  if [ -z "$PICK" ]; then
    gen_name "$S"
    printf 'made\n' >"$S/$NAME"
    run_sync
    PICK=./$NAME
  fi
}

# run_sync: one mirror_sync_one of /efs/app from $P/src/app into $P/dst/app, as the node runs it (4 jobs, small
# parts), under ${wrap[@]}; its output in $P/out, each rsync it starts noted in $P/rsync-calls.
cat >"$P/sync.sh" <<'EOF'
# shellcheck disable=SC2034 # the variables are read by mirror_sync_one
set -euo pipefail
source assets/lib/checkout.sh
MIRROR_SOURCE="$P/src" MIRROR_ROOT="$P/dst" MIRROR_STATE="$P/state"
EFSC_EXPORT_PATH=/efs EFSC_MIRROR_WORKERS=4 EFSC_MIRROR_TIMEOUT_SEC=120 EFSC_MIRROR_SIZE_MB=1
MIRROR_PART_FILES=16
mkdir -p "$MIRROR_STATE"
echo 0 >"$MIRROR_STATE/full"
mirror_sync_one /efs/app
EOF
mkdir -p "$P/shim"
cat >"$P/shim/rsync" <<'EOF'
#!/bin/bash
echo rsync >>"$P/rsync-calls"
exec /usr/bin/rsync "$@"
EOF
chmod +x "$P/shim/rsync"
wrap=()
run_sync() {
  rm -f "$P/rsync-calls"
  PATH="$P/shim:$PATH" "${wrap[@]}" bash "$P/sync.sh" >"$P/out" 2>&1
}
copied() { sed -n 's/.*(\([0-9]*\) files copied).*/\1/p' "$P/out"; }
walked() { sed -n 's/.*(\([a-z]*\) walk: \([0-9]*\) entries copied, \([0-9]*\) removed)$/\1 \2 \3/p' "$P/out"; }
count() { tr -cd '\0' | wc -c; }

# listing DIR: what a copy must hold of DIR, sorted by path: each entry's path, type, mode and owner, a non-directory's
# size, mtime and link target (a file's mtime to the nanosecond; a symlink's or FIFO's to the second: rsync sends no
# fraction of a second for them, and leaves the one it made them with when the second matches); then a digest of the files' contents in that order. Made with find alone (not rsync,
# whose copy is under test).
listing() {
  (
    cd "$1"
    find . \( -type d -printf '%p//%y %m %U %G\0' \) -o \( -type f -printf '%p//%y %m %U %G %s %T@\0' \) -o \
      -printf '%p//%y %m %U %G %s %Ts %l\0' | sort -z
    find . -type f -print0 | sort -z | xargs -0r cat | md5sum
  )
}
# same: the copy is the source (else: how they differ, bytes escaped).
same() {
  listing "$S" >"$P/want"
  listing "$D" >"$P/have"
  cmp -s "$P/want" "$P/have" && return 0
  echo "the copy differs from the tree (< tree, > copy):"
  diff <(tr '\0' '\n' <"$P/want" | cat -v) <(tr '\0' '\n' <"$P/have" | cat -v) | grep '^[<>]' | head -n 12
  return 1
}

# names: the tree's names, one a line, quoted by bash ($'...' for odd bytes).
names() {
  local p
  echo "# the names of seed $seed's tree (PROP_SEED=$seed PROP_TREES=1 bash test/host/mirror-sync/property.sh):"
  while IFS= read -r -d '' p; do printf '#   %q\n' "$p"; done < <(cd "$S" && find . -print0 | sort -z) | head -n 400
}

check() {
  local what="$1"
  shift
  if "$@" >"$P/why" 2>&1; then
    echo "ok - $what"
    passed=$((passed + 1))
  else
    echo "not ok - $what"
    failed=$((failed + 1))
    sed 's/^/#   /' "$P/why"
    echo "#   the sync said:"
    sed 's/^/#   /' "$P/out" | tail -n 20
    if [ "$shown" != "$seed" ]; then
      names
      shown=$seed
    fi
  fi
}

# synced EXPECT FILES: the sync succeeded, as a comparison with the last walk that copied and removed EXPECT ("<entries
# copied> <paths removed>") and FILES files, without a complaint from sort or comm, and the copy is the tree.
synced() {
  local rc=0
  run_sync || rc=$?
  if [ "$rc" != 0 ]; then echo "the sync failed (exit $rc)"; return 1; fi
  if grep -q 'sorted order' "$P/out"; then echo "sort or comm complained: $(grep 'sorted order' "$P/out")"; return 1; fi
  if [ "$(walked)" != "$1" ]; then echo "the sync's walk: '$(walked)', expected '$1'"; return 1; fi
  if [ "$(copied)" != "$2" ]; then echo "files copied: $(copied), expected $2"; return 1; fi
  same
}

# unchanged: a sync of an unchanged tree compares and copies nothing, starts no rsync and, under strace, costs the
# origin's side one walk: one stat call per entry and at most three more per directory (find's own of each directory it
# enters, and one when it climbs back into a directory whose descriptor it no longer holds: past 4 levels) plus the
# root's, the copy's side a handful (its root's identity and listing).
unchanged() {
  local entries dirs ssrc sdst
  entries=$(find "$S" -print0 | count) dirs=$(find "$S" -type d -print0 | count)
  if [ -n "$strace" ]; then
    # shellcheck disable=SC2054 # strace's own comma-separated list
    wrap=(strace -f -qq -y -s 4096 -o "$P/trace" -e trace=%stat,%lstat,%fstat,statx)
  fi
  synced "compared 0 0" 0 || { wrap=(); return 1; }
  wrap=()
  if [ -s "$P/rsync-calls" ]; then echo "$(wc -l <"$P/rsync-calls") rsync started"; return 1; fi
  [ -n "$strace" ] || return 0
  ssrc=$(grep -E '^[0-9]+ +[a-z0-9_]*stat[a-z0-9]*\(' "$P/trace" | grep -cF "$S" || true)
  sdst=$(grep -E '^[0-9]+ +[a-z0-9_]*stat[a-z0-9]*\(' "$P/trace" | grep -cF "$D" || true)
  echo "$entries entries, $dirs directories: $ssrc stat calls on the origin's side, $sdst on the copy's"
  if ((ssrc < entries || ssrc > entries + 3 * dirs + 2)); then
    echo "the origin's side: not one walk ($entries to $((entries + 3 * dirs + 2)) stat calls expected)"
    return 1
  fi
  ((sdst >= 1 && sdst <= 4)) || { echo "the copy's side: not a handful (1 to 4 expected)"; return 1; }
}

strace=
if command -v strace >/dev/null; then strace=1; else echo "# no strace here: the stat calls of the unchanged syncs are not counted"; fi
SHAPES=(wide deep mixed)
declare -A seen=()
shown=
for ((seed = seed0; seed < seed0 + trees; seed++)); do
  seed_rng "$seed"
  SHAPE=${SHAPES[seed % 3]} made=0 FIRST_FILE=
  rnd 17
  CHAIN=$((8 + R))
  # This seed's share of the bytes: 43 of the 254, so that any 6 seeds in a row hold every one.
  SWEEP=()
  for ((b = ((seed - 1) % 6) * 43; b < ((seed - 1) % 6) * 43 + 43 && b < ${#ALL[@]}; b++)); do SWEEP+=("${ALL[b]}"); done
  rm -rf "$P/src" "$P/dst" "$P/state"
  S="$P/src/app" D="$P/dst/app"
  mkdir -p "$S" "$P/dst"
  gen_dir "$S" 0
  # What is left of this seed's share of the bytes (a small tree has fewer names than that): files in random directories.
  while ((${#SWEEP[@]})); do
    pick -type d
    gen_name "$S/$PICK"
    content 2 && printf '%s' "$CONTENT" >"$S/$PICK/$NAME"
  done
  while IFS= read -r b; do seen[$b]=1; done < <(cd "$S" && find . -mindepth 1 -printf '%f' | od -An -v -tu1 | tr -s ' ' '\n' | sed '/^$/d' | sort -un)
  n=$(find "$S" -print0 | count) f=$(find "$S" -type f -print0 | count)
  t="seed $seed ($SHAPE, $n entries)"

  check "$t: the first sync copies it whole ($f files)" synced "full $n 0" "$f"
  check "$t: an unchanged sync copies nothing, starts no rsync, walks the origin once" unchanged

  # Each kind of change alone, and the sync after it.
  pick_file
  content 9 && printf '%s' "$CONTENT" >"$S/$PICK"
  check "$t: a file's content, with a new mtime" synced "compared 1 0" 1

  pick_file -size +0
  touch -r "$S/$PICK" "$P/ref"
  size=$(stat -c %s "$S/$PICK")
  head -c "$size" /dev/zero | tr '\0' Z >"$S/$PICK"
  touch -r "$P/ref" "$S/$PICK"
  check "$t: a file's content, its size and mtime kept (only its ctime shows it)" synced "compared 1 0" 1

  pick_file
  m=$(stat -c %a "$S/$PICK")
  chmod "$([ "$m" = 640 ] && echo 604 || echo 640)" "$S/$PICK"
  check "$t: a file's mode (its content copied again)" synced "compared 1 0" 1

  pick -type d
  m=$(stat -c %a "$S/$PICK")
  chmod "$([ "$m" = 750 ] && echo 755 || echo 750)" "$S/$PICK"
  check "$t: a directory's mode ($([ "$PICK" = . ] && echo the root || echo not the root))" synced "compared 1 0" 0

  pick -type l
  if [ -z "$PICK" ]; then
    gen_name "$S" && ln -s x "$S/$NAME" && run_sync
    PICK=./$NAME
  fi
  gen_target "$S/${PICK%/*}"
  ln -sfn -- "$TARGET" "$S/$PICK"
  check "$t: a symlink's target (ln -sfn: its directory changes too)" synced "compared 2 0" 0

  pick -type d
  gen_name "$S/$PICK"
  content 5 && printf '%s' "$CONTENT" >"$S/$PICK/$NAME"
  check "$t: an added file (the file and its directory)" synced "compared 2 0" 1

  pick -type d
  gen_name "$S/$PICK"
  mkdir -- "$S/$PICK/$NAME"
  check "$t: an added empty directory (it and its directory)" synced "compared 2 0" 0

  pick ! -type d -links 1
  if [ -z "$PICK" ]; then pick_file; fi
  rm -- "$S/$PICK"
  check "$t: a removal (its directory copied, the path removed)" synced "compared 1 1" 0

  pick_file
  file=$PICK
  pick -type d
  gen_name "$S/$PICK"
  mv -- "$S/$file" "$S/$PICK/$NAME"
  if [ "$PICK" = "${file%/*}" ]; then e="2 1"; else e="3 1"; fi
  check "$t: a file renamed ($([ "$e" = "2 1" ] && echo in its directory || echo to another directory))" synced "compared $e" 1

  pick_file
  rm -- "$S/$PICK"
  mkdir -- "$S/$PICK"
  gen_name "$S/$PICK"
  content 3 && printf '%s' "$CONTENT" >"$S/$PICK/$NAME"
  check "$t: a file that became a directory, with a file in it" synced "compared 3 0" 1

  pick_tree
  rm -r -- "${S:?}/$PICK"
  content 4 && printf '%s' "$CONTENT" >"$S/$PICK"
  check "$t: a directory that became a file (its subtree goes with it)" synced "compared 2 0" 1

  pick_tree
  tree=$PICK
  k=$(find "$S/$tree" -print0 | count) f=$(find "$S/$tree" -type f -print0 | count)
  mapfile -t -d '' dirs < <(cd "$S" && find . -type d -print0 | sort -z)
  for ((i = 0; i < 50; i++)); do
    rnd ${#dirs[@]}
    to=${dirs[R]}
    [[ "$to" == "$tree" || "$to" == "$tree"/* ]] || break
  done
  gen_name "$S/$to"
  mv -- "$S/$tree" "$S/$to/$NAME"
  if [ "$to" = "${tree%/*}" ]; then e="$((k + 1)) 1"; else e="$((k + 2)) 1"; fi
  check "$t: a directory of $k entries renamed (its subtree copied again: rsync cannot rename)" synced "compared $e" "$f"

  pick_tree
  rm -r -- "${S:?}/$PICK"
  check "$t: a directory removed with its subtree (the top-most path alone)" synced "compared 1 1" 0

  check "$t: a last unchanged sync copies nothing" unchanged
done

n=${#seen[@]}
missing=()
for b in "${ALL[@]}"; do [ -n "${seen[$b]:-}" ] || missing+=("$b"); done
if ((trees >= 6)); then
  check "the names of the trees held every byte a name may hold ($n of ${#ALL[@]}; missing: ${missing[*]:-none})" \
    test "$n" = "${#ALL[@]}"
fi
echo "# $trees trees (seeds $seed0 to $((seed0 + trees - 1))), $n distinct bytes in their names, $((SECONDS - started)) s"
echo "mirror-sync-property: $passed passed, $failed failed"
[ "$failed" = 0 ]
