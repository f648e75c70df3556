#!/bin/bash
set -euo pipefail
# Data seeding (EC2 user-data of DataSeeder): loads a data set into EFS with fpsync (fpart + parallel rsync), because
# serial small-file writes to NFS wait one round trip per operation and parallel ones do not. In order: check the
# parameters, install the packages, stage the source on local disk (an S3 prefix, a CDK asset zip, or a directory
# already on the instance), mount EFS, copy with fpsync (progress in the log every EFSC_PROGRESS_SEC), optionally
# delete what the source does not hold, verify that every source file is at the target with the same size and time,
# then signal CloudFormation and power off (the instance terminates: its shutdown behavior).
# rsync skips files whose size and time already match, so running again copies only what changed.
# A failure ends the run after one line "efs-cache: FATAL: <reason>"; CloudFormation gets FAILURE (aws-signal.sh) and
# the instance stays up until the stack's rollback removes it.
#   seed.sh                 everything (first boot, from cloud-init)
#   seed.sh --no-shutdown   everything but the power-off (by hand on the instance, or from a checkout)
# Parameters:
#   EFSC_SOURCE_KIND        s3 (a prefix), asset (a zip of a directory) or local (a directory on this instance)
#   EFSC_SOURCE_URI         s3://bucket/prefix/, s3://bucket/key.zip, or /absolute/dir
#   EFSC_SOURCE_REGION      region of the source bucket (may be empty)
#   EFSC_EFS_SERVER         EFS DNS name (or any NFS server)
#   EFSC_MOUNT_TYPE         efs (amazon-efs-utils) or nfs4;   EFSC_MOUNT_OPTIONS  comma list
#   EFSC_MOUNT_TIMEOUT_SEC  how long mounting may keep failing (new mount targets take a while to resolve)
#   EFSC_TARGET_PATH        absolute path in the file system that receives the data (created)
#   EFSC_WORKERS            parallel rsync jobs (fpsync -n);   EFSC_FILES_PER_PART  files per job (fpsync -f)
#   EFSC_DELETE_EXTRANEOUS  true: delete target files that the source does not hold
#   EFSC_PROGRESS_SEC       seconds between progress lines
#   EFSC_VERSION            free text; a new value makes CDK replace the instance, which seeds again (may be empty)
#   EFSC_SIGNAL_STACK, EFSC_SIGNAL_RESOURCE, EFSC_SIGNAL_REGION   read by aws-signal.sh (may be empty: no signal)
# Run from a checkout, source the libraries (lib/checkout.sh); in user data the code holds them, before this script.
if ! declare -F die >/dev/null; then
  # shellcheck source-path=SCRIPTDIR source=../lib/checkout.sh
  source "$(dirname "${BASH_SOURCE[0]}")/../lib/checkout.sh"
fi

WORK=/var/lib/efs-cache/seed
MNT=/mnt/efs-cache-seed
# fpsync's default fpart options skip these names (snapshot folders of other file systems); they are passed
# explicitly so that the delete pass and the verification skip the same ones.
SKIP=(.zfs '.snapshot*' .ckpt)

check_parameters() {
  local p
  need EFSC_SOURCE_KIND '^(s3|asset|local)$' 's3, asset or local'
  case "$EFSC_SOURCE_KIND" in
    s3) need EFSC_SOURCE_URI '^s3://[a-z0-9][a-z0-9.-]{1,62}/([A-Za-z0-9._=+-]+/)*$' 's3://bucket/prefix/' ;;
    asset) need EFSC_SOURCE_URI '^s3://[a-z0-9][a-z0-9.-]{1,62}/[A-Za-z0-9._/=+-]+$' 's3://bucket/key' ;;
    *) need EFSC_SOURCE_URI "$RE_DIR" 'an absolute path, not /' ;;
  esac
  need EFSC_SOURCE_REGION '^([a-z]{2}(-[a-z]+)+-[0-9]+)?$' 'a region, or empty'
  need EFSC_EFS_SERVER "$RE_HOST" 'a host name or address'
  need EFSC_MOUNT_TYPE '^(nfs4|efs)$' 'nfs4 or efs'
  need EFSC_MOUNT_OPTIONS "$RE_OPTS" 'mount options'
  need EFSC_TARGET_PATH "$RE_PATH" 'an absolute path'
  [[ "$EFSC_TARGET_PATH/" != */../* && "$EFSC_TARGET_PATH/" != */./* ]] || die "EFSC_TARGET_PATH must not hold . or .."
  for p in MOUNT_TIMEOUT_SEC WORKERS FILES_PER_PART PROGRESS_SEC; do need "EFSC_$p" "$RE_NUM" 'a number'; done
  ((EFSC_MOUNT_TIMEOUT_SEC && EFSC_WORKERS && EFSC_FILES_PER_PART && EFSC_PROGRESS_SEC)) ||
    die "timeout, workers, files per part and progress interval must be > 0"
  need EFSC_DELETE_EXTRANEOUS '^(true|false)$' 'true or false'
  need EFSC_VERSION '^[A-Za-z0-9._:+-]{0,64}$' 'up to 64 of A-Za-z0-9._:+-, or empty'
}

install_packages() {
  local p=(rsync)
  if [ "$OS_PKG" = dnf ]; then p+=(nfs-utils); else p+=(nfs-common); fi
  # fpart (with fpsync) is not in Amazon Linux 2023's core repositories: SPAL (EPEL-derived) carries it.
  if [ "$OS_PKG" = dnf ] && ! pkg_installed fpart; then ensure_packages spal-release; fi
  p+=(fpart)
  if [ "$EFSC_SOURCE_KIND" = asset ]; then p+=(unzip); fi
  ensure_packages "${p[@]}"
  if [ "$EFSC_MOUNT_TYPE" = efs ]; then ensure_efs_utils; fi
  if [ "$EFSC_SOURCE_KIND" != local ]; then ensure_aws_cli; fi
  command -v fpsync >/dev/null || die "fpsync is not installed (package fpart)"
}

# Sets SRC, the local directory to copy from.
stage_source() {
  local r=() zip="$WORK/source.zip"
  if [ -n "$EFSC_SOURCE_REGION" ]; then r=(--region "$EFSC_SOURCE_REGION"); fi
  case "$EFSC_SOURCE_KIND" in
    local)
      SRC="$EFSC_SOURCE_URI"
      [ -d "$SRC" ] || die "source directory $SRC does not exist"
      ;;
    s3)
      SRC="$WORK/source"
      mkdir -p "$SRC"
      log "downloading $EFSC_SOURCE_URI to $SRC"
      # The local copy mirrors the prefix (--delete acts on this staging folder only, never on EFS).
      aws s3 sync "${r[@]}" --only-show-errors --no-progress --delete "$EFSC_SOURCE_URI" "$SRC" ||
        die "could not download $EFSC_SOURCE_URI (read access? is rootVolumeSize large enough for the data set?)"
      ;;
    asset)
      SRC="$WORK/source"
      mkdir -p "$WORK"
      log "downloading $EFSC_SOURCE_URI"
      aws s3 cp "${r[@]}" --only-show-errors --no-progress "$EFSC_SOURCE_URI" "$zip" ||
        die "could not download $EFSC_SOURCE_URI (read access?)"
      rm -rf "$SRC.new"
      unzip -q "$zip" -d "$SRC.new" || die "could not unpack $EFSC_SOURCE_URI (is rootVolumeSize large enough?)"
      rm -rf "$SRC" "$zip"
      mv "$SRC.new" "$SRC"
      ;;
  esac
}

# Mounts the file system's root at MNT, retrying for EFSC_MOUNT_TIMEOUT_SEC (mount_within, lib/common.sh), and sets
# DST, the target directory.
mount_efs() {
  if [ "$EFSC_MOUNT_TYPE" = efs ] && ! command -v mount.efs >/dev/null; then die "mount type efs needs amazon-efs-utils"; fi
  mkdir -p "$MNT"
  mount_within "$EFSC_MOUNT_TIMEOUT_SEC" "$EFSC_EFS_SERVER:/" "$MNT" \
    -t "$EFSC_MOUNT_TYPE" -o "$EFSC_MOUNT_OPTIONS" "$EFSC_EFS_SERVER:/" "$MNT" ||
    die "could not mount $EFSC_EFS_SERVER:/ within ${EFSC_MOUNT_TIMEOUT_SEC}s: ${MOUNT_ERROR:-timed out}"
  DST="$MNT${EFSC_TARGET_PATH%/}"
  mkdir -p "$DST" || die "cannot create $EFSC_TARGET_PATH on $EFSC_EFS_SERVER"
}

# stats DIR: "<regular files> <their bytes>", skipping the SKIP names.
stats() {
  local s x=()
  for s in "${SKIP[@]}"; do x+=(-name "$s" -o); done
  find "$1" -mindepth 1 \( "${x[@]}" -false \) -prune -o -type f -printf '%s\n' |
    awk '{ n++; b += $1 } END { printf "%d %d\n", n, b }'
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }

# copied DIR: "<files> <bytes>" that fpsync's rsync jobs transferred so far (their --out-format lines).
copied() {
  find "$1" -name '*.stdout' -exec cat {} + 2>/dev/null | awk -F: '/^>f/ { n++; b += $NF } END { printf "%d %d\n", n, b }'
}

# fpsync: one rsync per part of EFSC_FILES_PER_PART files, EFSC_WORKERS at a time. -o REPLACES fpsync's rsync
# options: archive-like without -r (fpart lists every file; -d creates the directories it lists) and without --delete;
# --inplace writes each file once.
copy() {
  local tmp out seen=0 pid rc=0 next t0=$SECONDS n b o="-lptgoD -d --numeric-ids --inplace --out-format=%i:%l" fo="" s
  # CDK asset zips carry no modification times: compare contents there, or a changed file of the same size is skipped.
  if [ "$EFSC_SOURCE_KIND" = asset ]; then o+=" --checksum"; fi
  for s in "${SKIP[@]}"; do fo+="${fo:+|}-x|$s"; done
  read -r n b < <(stats "$SRC")
  SOURCE_FILES=$n SOURCE_BYTES=$b
  mkdir -p "$WORK"
  tmp=$(mktemp -d "$WORK/fpsync.XXXXXX")
  out="$tmp/fpsync.out"
  log "copying $SRC ($n files, $(mib "$b")) to $EFSC_EFS_SERVER:$EFSC_TARGET_PATH: fpsync, $EFSC_WORKERS workers," \
    "$EFSC_FILES_PER_PART files per part"
  fpsync -v -n "$EFSC_WORKERS" -f "$EFSC_FILES_PER_PART" -t "$tmp" -O "$fo" -o "$o" "$SRC/" "$DST/" >"$out" 2>&1 &
  pid=$!
  next=$((SECONDS + EFSC_PROGRESS_SEC))
  emit() {
    local l
    while IFS= read -r l; do
      seen=$((seen + 1))
      # fpsync's dash says this for every job it starts without a terminal: noise.
      [[ "$l" == *"job control turned off" ]] || log "fpsync: ${l#[0-9]* }"
    done < <(tail -n "+$((seen + 1))" "$out")
  }
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    emit
    if [ "$SECONDS" -ge "$next" ]; then
      read -r n b < <(copied "$tmp/log")
      log "progress: $n files ($(mib "$b")) copied in $((SECONDS - t0))s; the source holds $SOURCE_FILES ($(mib "$SOURCE_BYTES"))"
      next=$((SECONDS + EFSC_PROGRESS_SEC))
    fi
  done
  wait "$pid" || rc=$?
  emit
  if [ "$rc" -ne 0 ]; then
    s=$(find "$tmp/log" -name '*.stderr' -size +0 -exec head -qn 1 {} + 2>/dev/null | head -n 1)
    die "fpsync failed (exit $rc): ${s:-see $out}; job logs in $tmp/log"
  fi
  read -r n b < <(copied "$tmp/log")
  COPIED_FILES=$n
  log "copied $n files ($(mib "$b")) in $((SECONDS - t0))s; the other $((SOURCE_FILES - n)) were up to date"
  rm -rf "$tmp"
}

# rsync options shared by the delete pass and the verification: the same attributes and skipped names as the copy.
rsync_check_opts() {
  local s
  CHECK=(-rlptgoD --numeric-ids)
  for s in "${SKIP[@]}"; do CHECK+=("--exclude=$s"); done
}

# Target files the source does not hold (EFSC_DELETE_EXTRANEOUS=true only): one rsync that copies nothing.
delete_extraneous() {
  local out
  log "deleting what $SRC does not hold from $EFSC_TARGET_PATH"
  out=$(rsync "${CHECK[@]}" --existing --ignore-existing --delete --itemize-changes "$SRC/" "$DST/") ||
    die "the delete pass (rsync --delete) failed"
  log "deleted $(grep -c '^\*deleting' <<<"$out" || true) entries"
}

# Every source entry must be at the target with the same size, time, mode and owner (a dry run that lists what it
# would change). Directory times are not compared: parallel jobs touch them after rsync sets them.
verify() {
  local d=() diff bad
  if [ "$EFSC_DELETE_EXTRANEOUS" = true ]; then d=(--delete); fi
  diff=$(rsync "${CHECK[@]}" "${d[@]}" --dry-run --itemize-changes "$SRC/" "$DST/") || die "the verification (rsync --dry-run) failed"
  bad=$(grep -E '^([<>ch.][fLDS]|cd|\*deleting)' <<<"$diff" || true)
  [ -z "$bad" ] || die "verification: $(wc -l <<<"$bad") entries differ at the target, first: $(head -n 1 <<<"$bad")"
  log "verified: all $SOURCE_FILES files ($(mib "$SOURCE_BYTES")) of the source are at $EFSC_TARGET_PATH with the same size and time"
}

main() {
  local keep=""
  case "${1:-}" in
    "") ;;
    --no-shutdown) keep=yes ;;
    *) die "unknown argument '$1' (use --no-shutdown)" ;;
  esac
  signal_arm
  check_parameters
  exec 9>/run/efs-cache-seed.lock
  flock -n 9 || die "another seeding run is in progress (/run/efs-cache-seed.lock)"
  detect_os
  install_packages
  stage_source
  mount_efs
  rsync_check_opts
  copy
  if [ "$EFSC_DELETE_EXTRANEOUS" = true ]; then delete_extraneous; fi
  verify
  umount "$MNT" || warn "could not unmount $MNT"
  log "seeding done: $COPIED_FILES of $SOURCE_FILES files copied to $EFSC_EFS_SERVER:$EFSC_TARGET_PATH${EFSC_VERSION:+ (version $EFSC_VERSION)}"
  if [ -n "$keep" ]; then return 0; fi
  # Signal before powering off, so the power-off cannot overtake it (aws-signal.sh then skips its exit-time signal).
  signal_cloudformation SUCCESS
  log "powering off in a minute; the instance terminates (its shutdown behavior)"
  shutdown -h +1 "efs-cache: seeding done" || die "could not schedule the power-off"
}

main "$@"
