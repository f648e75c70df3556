#!/bin/bash
set -euo pipefail
# S3 mirrors of a cache node (`mirrorSources`): an S3 prefix copied into the mirrors' file system
# (MIRROR_ROOT/<name>, lib/mirror.sh) and served by the mirrors' own nfsd like a path mirror, with its interval,
# timeout, size check, first sync before serving and failure rules (a failed sync keeps the copy served, is counted in
# MirrorSyncFailures and leaves a WARN line). One sync of one S3 mirror (mirror_s3_sync_one):
#   1. lists the prefix completely (aws s3api list-objects-v2: the CLI follows every page; a page that fails fails the
#      listing), key, size and ETag of each object, into a new listing; a listing that fails, ends by the timeout or
#      does not parse fails the sync: nothing is fetched or removed;
#   2. compares it with the last good listing (MIRROR_STATE/.walk/<name>/record) and fetches only the objects that are
#      new or whose ETag or size changed, EFSC_MIRROR_WORKERS at a time, each to a temporary name in its own directory
#      (get-object --if-match the listed ETag: the copy holds the version the listing saw) and renamed over the old
#      one, so a reader sees the old or the new file, never a mix;
#   3. removes, last and only once every fetch succeeded, what the last listing held and this one does not.
# The record is trusted only for the copy it was made for (same boot, file system and root inode); otherwise the sync
# fetches the whole listing and removes whatever the copy holds beyond it (the first sync of a boot). Keys are data:
# never evaluated, only passed as quoted arguments. A key that would leave the mirror (a leading /, an empty, . or ..
# component), holds a control character or a component longer than 255 bytes, or is also the prefix of other keys (a
# file where a directory must be), is skipped with a WARN line; a key that ends in / (a folder placeholder) is skipped.
#   EFSC_MIRROR_S3_NAMES    the S3 mirrors' names, each exported at MIRROR_ROOT/<name>, space-separated
#   EFSC_MIRROR_S3_FSIDS    the export fsid of each (same order; the same on every node)
#   EFSC_MIRROR_S3_URIS     s3://bucket/prefix/ of each (s3://bucket/ for a whole bucket)
#   EFSC_MIRROR_S3_REGIONS  the region of each bucket
# Needs common.sh and mirror.sh (MIRROR_ROOT, MIRROR_STATE, mirror_stamp).

# The start of the temporary names of fetches in flight; keys whose last component starts with it are skipped.
MIRROR_S3_TMP=.efsc-s3.

# mirror_s3_words VAR REGEX WHAT: each space-separated word of VAR matches REGEX; sets MIRROR_S3_N to how many.
mirror_s3_words() {
  local w
  MIRROR_S3_N=0
  for w in ${!1}; do
    [[ "$w" =~ $2 ]] || die "$1: '$w' is invalid: expected $3"
    MIRROR_S3_N=$((MIRROR_S3_N + 1))
  done
}

mirror_s3_check() {
  local n=() w
  mirror_s3_words EFSC_MIRROR_S3_NAMES '^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$' 'a relative path'
  n+=("$MIRROR_S3_N")
  mirror_s3_words EFSC_MIRROR_S3_FSIDS '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' 'a UUID'
  n+=("$MIRROR_S3_N")
  mirror_s3_words EFSC_MIRROR_S3_URIS '^s3://[a-z0-9][a-z0-9.-]{1,62}/([A-Za-z0-9._=+-]+/)*$' 's3://bucket/prefix/'
  n+=("$MIRROR_S3_N")
  mirror_s3_words EFSC_MIRROR_S3_REGIONS '^[a-z]{2}(-[a-z]+)+-[0-9]+$' 'a region'
  n+=("$MIRROR_S3_N")
  if [ "${n[0]}" = 0 ] || [ "${n[*]}" != "${n[0]} ${n[0]} ${n[0]} ${n[0]}" ]; then
    die "EFSC_MIRROR_S3_*: ${n[0]} names, ${n[1]} fsids, ${n[2]} URIs and ${n[3]} regions: expected one of each per S3 mirror"
  fi
  for w in $EFSC_MIRROR_S3_NAMES $EFSC_MIRROR_S3_URIS; do
    [[ "/${w#s3://}/" != */../* && "/${w#s3://}/" != */./* ]] || die "EFSC_MIRROR_S3_*: '$w' has a . or .. component"
  done
}

# mirror_s3_each: one line per S3 mirror, "<name> <fsid> <uri> <region>".
mirror_s3_each() {
  local i names=() fsids=() uris=() regions=()
  [ -n "${EFSC_MIRROR_S3_NAMES:-}" ] || return 0
  read -ra names <<<"$EFSC_MIRROR_S3_NAMES"
  read -ra fsids <<<"$EFSC_MIRROR_S3_FSIDS"
  read -ra uris <<<"$EFSC_MIRROR_S3_URIS"
  read -ra regions <<<"$EFSC_MIRROR_S3_REGIONS"
  for i in "${!names[@]}"; do echo "${names[i]} ${fsids[i]} ${uris[i]} ${regions[i]}"; done
}

# mirror_s3_parse PREFIX SKIPPED: the CLI's JSON listing (--query 'Contents[].[Key,Size,ETag]', indented, one value a
# line; a prefix without objects: null) on stdin to "<path under the prefix>\t<size>\t<etag>" lines on stdout, sorted;
# the keys skipped appended to the file SKIPPED, one a line (as JSON text: control characters stay escaped). Fails on
# anything else: a listing that does not parse is a failed listing.
mirror_s3_parse() {
  local -x LC_ALL=C
  awk -v prefix="$1" -v skipped="$2" -v tmp="$MIRROR_S3_TMP" '
    function bad(why) { print "mirror_s3_parse: line " NR ": " why > "/dev/stderr"; failed = 1; exit 2 }
    # The JSON text of a key (between its quotes) as bytes, or "" with esc set when it escapes a control character.
    function unjson(s,   out, i, c) {
      esc = 0
      if (index(s, "\\") == 0) return s
      out = ""
      for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (c != "\\") { out = out c; continue }
        c = substr(s, ++i, 1)
        if (c == "\"" || c == "\\" || c == "/") out = out c
        else { esc = 1; return "" }
      }
      return out
    }
    NR == 1 { if ($0 == "null") { done = 1; next } if ($0 != "[") bad("expected [ or null"); next }
    done { if ($0 != "") bad("text after the listing"); next }
    state == 0 && $0 == "]" { done = 1; next }
    state == 0 { if ($0 != "    [") bad("expected an object"); state = 1; next }
    state == 1 { if ($0 !~ /^        ".*",$/) bad("expected a key"); raw = substr($0, 10, length($0) - 11); state = 2; next }
    state == 2 { if ($0 !~ /^        [0-9]+,$/) bad("expected a size"); size = substr($0, 9, length($0) - 9); state = 3; next }
    state == 3 {
      if ($0 !~ /^        "\\"[^"\\]+\\""$/) bad("expected an ETag")
      etag = substr($0, 10, length($0) - 10); gsub(/\\/, "", etag); state = 4; next
    }
    state == 4 {
      if ($0 != "    ]," && $0 != "    ]") bad("expected the end of an object")
      state = 0
      key = unjson(raw)
      if (esc) { print raw >>skipped; next }
      if (substr(key, 1, length(prefix)) != prefix) bad("a key outside the prefix")
      rel = substr(key, length(prefix) + 1)
      if (rel == "" || rel ~ /\/$/) next
      n = split(rel, part, "/"); ok = rel !~ /^\// && rel !~ /\/\// && rel !~ /[\001-\037\177]/
      for (i = 1; i <= n && ok; i++) if (part[i] == "." || part[i] == ".." || length(part[i]) > 255) ok = 0
      if (ok && substr(part[n], 1, length(tmp)) == tmp) ok = 0
      if (!ok) { print raw >>skipped; next }
      print rel "\t" size "\t" etag
    }
    END { if (!failed && !done) bad("the listing ends early") }' | sort -t "$(printf '\t')" -k1,1 -u |
    # A key that is also the directory of other keys cannot be a file of the copy: skipped (the directory stays).
    awk -F '\t' -v skipped="$2" '{ r[NR] = $0; p[NR] = $1; n = split($1, c, "/"); d = ""; for (i = 1; i < n; i++) { d = d (i > 1 ? "/" : "") c[i]; dir[d] = 1 } }
      END { for (i = 1; i <= NR; i++) if (p[i] in dir) print "\"" p[i] "\" (also a directory)" >>skipped; else print r[i] }'
}

# mirror_s3_dir DIR: DIR and its parents under MIRROR_S3_DST as directories; a file or link where one must be (a key
# that became the prefix of others) goes first.
mirror_s3_dir() {
  local d="$MIRROR_S3_DST" c rest="${1#"$MIRROR_S3_DST"}"
  rest=${rest#/}
  while [ -n "$rest" ]; do
    c=${rest%%/*} rest=${rest#"$c"} rest=${rest#/}
    d+="/$c"
    if [ -L "$d" ] || { [ -e "$d" ] && [ ! -d "$d" ]; }; then rm -f -- "$d" || return 1; fi
    [ -d "$d" ] || mkdir -m 0755 -- "$d" || return 1
  done
}

# mirror_s3_get REL ETAG: fetches the object MIRROR_S3_PREFIX/REL, if its ETag is still ETAG, to a temporary name in
# its directory and renames it over MIRROR_S3_DST/REL (run by xargs in a bash of its own: no errexit, each step checked).
mirror_s3_get() {
  local f="$MIRROR_S3_DST/$1" d tmp
  d=${f%/*}
  mirror_s3_dir "$d" || return 1
  tmp=$(mktemp "$d/${MIRROR_S3_TMP}XXXXXX") || return 1
  if ! aws s3api get-object --region "$MIRROR_S3_REGION" --bucket "$MIRROR_S3_BUCKET" --key "$MIRROR_S3_PREFIX$1" \
    --if-match "$2" "$tmp" >/dev/null; then
    rm -f -- "$tmp"
    return 1
  fi
  if ! { chmod 0644 "$tmp" && { [ -L "$f" ] || [ ! -d "$f" ] || rm -rf -- "$f"; } && mv -fT -- "$tmp" "$f"; }; then
    rm -f -- "$tmp"
    return 1
  fi
}

# mirror_s3_sync_one NAME URI REGION: one sync of one S3 mirror; state in MIRROR_STATE/<name> as for path mirrors:
# "<last success> <seconds> <objects>". Removals: the paths of the last good listing (and of the fetches of failed
# syncs since, .walk/<name>/dirty) that this listing does not hold, then the directories left empty.
mirror_s3_sync_one() {
  local -x LC_ALL=C
  local rel="/$1" t="$MIRROR_STATE/sync" rc=0 t0=$SECONDS mode=compared st dst stamp left bucket prefix k r=0 n e bytes
  bucket=${2#s3://} bucket=${bucket%%/*}
  prefix=${2#"s3://$bucket/"}
  st="$MIRROR_STATE/.walk/$(systemd-escape -p "$rel")" dst="$MIRROR_ROOT$rel"
  rm -rf "$t"
  mkdir -p "$t" "$dst" "$st"
  # Fetches a killed sync left in flight.
  find "$dst" -name "$MIRROR_S3_TMP*" -type f -delete 2>/dev/null || true
  timeout -k 10 "$EFSC_MIRROR_TIMEOUT_SEC" aws s3api list-objects-v2 --region "$3" --bucket "$bucket" --prefix "$prefix" \
    --output json --query 'Contents[].[Key,Size,ETag]' >"$t/json" 2>"$t/err" || rc=$?
  if [ "$rc" = 0 ]; then mirror_s3_parse "$prefix" "$t/skipped" <"$t/json" >"$t/list" 2>>"$t/err" || rc=$?; fi
  if [ "$rc" != 0 ]; then
    warn "mirror $2: listing failed (exit $rc): serving the last copy, nothing removed: $(tail -n 2 "$t/err" | tr '\n' ' ')"
    return 1
  fi
  if [ -s "$t/skipped" ]; then
    warn "mirror $2: $(wc -l <"$t/skipped") keys skipped (they would leave the mirror, hold control characters, or are also a directory): $(head -n 3 "$t/skipped" | tr '\n' ' ')"
  fi
  bytes=$(awk -F '\t' '{ b += $2 } END { printf "%d\n", b }' "$t/list")
  if ((bytes > $(df -B1 --output=size "$MIRROR_ROOT" | tail -n 1 | tr -dc 0-9))); then
    echo 1 >"$MIRROR_STATE/full"
    warn "mirror $2 ($bytes bytes) does not fit in $MIRROR_ROOT ($EFSC_MIRROR_SIZE_MB MiB): serving the last copy; raise mirroring.size"
    return 1
  fi
  stamp=$(mirror_stamp "$dst")
  if ! [ -f "$st/record" ] || [ "$(cat "$st/copy" 2>/dev/null)" != "$stamp" ]; then
    mode=full
    rm -f "$st/record" "$st/copy" "$st/dirty"
    cp "$t/list" "$t/plus"
  else
    comm -13 "$st/record" "$t/list" >"$t/plus"
    cut -f1 "$t/list" >"$t/now"
    { cut -f1 "$st/record"; cat "$st/dirty" 2>/dev/null || true; } | sort -u | comm -23 - "$t/now" >"$t/remove"
  fi
  k=$(wc -l <"$t/plus")
  left=$((EFSC_MIRROR_TIMEOUT_SEC + t0 - SECONDS))
  ((left > 0)) || left=1
  if [ -s "$t/plus" ]; then
    # Each fetch in a bash of its own (xargs), with the keys as arguments: never as code.
    export MIRROR_S3_DST="$dst" MIRROR_S3_BUCKET="$bucket" MIRROR_S3_PREFIX="$prefix" MIRROR_S3_REGION="$3" MIRROR_S3_TMP
    export -f mirror_s3_get mirror_s3_dir
    # shellcheck disable=SC2016 # the fetch's own arguments
    awk -F '\t' '{ printf "%s%c%s%c", $1, 0, $3, 0 }' "$t/plus" |
      timeout -k 30 "$left" xargs -0 -n 2 -P "$EFSC_MIRROR_WORKERS" bash -c 'mirror_s3_get "$1" "$2"' mirror-s3 2>>"$t/err" || rc=$?
  fi
  if [ "$rc" = 0 ] && [ "$mode" = full ]; then
    # A full sync's removals: what the copy holds beyond the listing.
    cut -f1 "$t/list" >"$t/now"
    find "$dst" -mindepth 1 ! -type d -printf '%P\n' | sort | comm -23 - "$t/now" >"$t/remove"
  fi
  if [ "$rc" != 0 ]; then
    e=$(cat "$t/err")
    if [ "$mode" = compared ]; then
      touch "$st/dirty"
      cut -f1 "$t/plus" | sort -u - "$st/dirty" >"$st/dirty.new" && mv "$st/dirty.new" "$st/dirty"
    fi
    if [[ "$e" == *"No space left on device"* ]]; then
      echo 1 >"$MIRROR_STATE/full"
      warn "mirror $2 does not fit in $MIRROR_ROOT ($EFSC_MIRROR_SIZE_MB MiB): serving the last copy; raise mirroring.size"
    else
      warn "mirror $2: sync failed (exit $rc): serving the last copy, nothing removed: $(tail -n 3 <<<"$e" | tr '\n' ' ')"
    fi
    return 1
  fi
  # Removals, once every fetch has succeeded: files only (a path that is now a directory stays), then empty directories.
  if [ -s "$t/remove" ]; then
    r=$(wc -l <"$t/remove")
    while IFS= read -r n; do
      if [ -L "$dst/$n" ] || [ -f "$dst/$n" ]; then rm -f -- "$dst/$n"; fi
    done <"$t/remove"
    find "$dst" -mindepth 1 -depth -type d -empty -delete || warn "mirror $2: cannot remove the empty directories"
  fi
  mv "$t/list" "$st/record"
  echo "$stamp" >"$st/copy"
  rm -f "$st/dirty"
  n=$(wc -l <"$st/record")
  echo "$(date +%s) $((SECONDS - t0)) $n" >"$MIRROR_STATE/$(systemd-escape -p "$rel")"
  log "mirror $2: synced $n objects in $((SECONDS - t0))s ($mode listing: $k fetched, $r removed)"
}
