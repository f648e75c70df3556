#!/bin/bash
set -euo pipefail
# The mirrors' metrics (see mirror.sh). Needs common.sh, mirror.sh, mirror-storage.sh and mirror-nfsd.sh.

# Metrics of the mirrors for metrics_read (names: lib/monitoring/metrics.ts): failed syncs, age of the oldest copy,
# the last sync's seconds and files walked (sums over the mirrors), whether the last sync ran out of space, bytes
# held, and the origin operations of the syncs' own mounts (those of the mounts unmounted, of the one mounted, and of
# the change marker's mount, kept between syncs).
mirror_metrics_read() {
  local p f now age=0 secs=0 files=0 t s n
  mirrors || return 0
  now=$(date +%s)
  while read -r p _; do
    f="$MIRROR_STATE/$(systemd-escape -p "$p")"
    if read -r t s n 2>/dev/null <"$f"; then
      if ((now - t > age)); then age=$((now - t)); fi
      secs=$((secs + s)) files=$((files + n))
    else
      age=$(awk '{printf "%d", $1}' /proc/uptime)
    fi
  done < <(mirror_each)
  echo "MirrorSyncFailures c $(cat "$MIRROR_STATE/failures" 2>/dev/null || echo 0)"
  echo "MirrorAgeSeconds g $age"
  echo "MirrorSyncSeconds g $secs"
  echo "MirrorFilesWalked g $files"
  echo "MirrorFull g $(cat "$MIRROR_STATE/full" 2>/dev/null || echo 0)"
  echo "MirrorBytes g $(df -B1 --output=used "$MIRROR_ROOT" 2>/dev/null | tail -n 1 | tr -d ' ' || echo 0)"
  echo "MirrorOriginOps c $(($(cat "$MIRROR_STATE/origin-ops" 2>/dev/null || echo 0) + $(mirror_source_ops) + $(mirror_source_ops "$MIRROR_MARKER/")))"
}
