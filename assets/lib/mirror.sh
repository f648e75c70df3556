#!/bin/bash
set -euo pipefail
# Mirrors of a cache node: chosen subtrees of the origin served from a local copy instead of the
# re-export. The copy lives on a local file system of the node's own at MIRROR_ROOT (a tmpfs, or an ext4 image on the
# instance store's disk cache file system, made afresh at boot), so nfsd exports a local file system and grants read
# delegations: a client holding one re-opens and re-reads a file with no request. The mirrors have an nfsd of their
# own (mirror_server_up, TCP EFSC_MIRROR_PORT of the node), whose threads an origin that stopped answering cannot hold.
# The mirrors' code is in five files, each concatenated after this one in every instance's code:
#   mirror.sh           the parameters, their check, the list of mirrors, the units and serving (mirror_setup, mirror_serve)
#   mirror-storage.sh   the file system of the copies (a tmpfs or an ext4 image) and the sync's own origin mount
#   mirror-sync.sh      one sync of every mirror: the walk, the comparison, the copy, the change marker
#   mirror-nfsd.sh      the mirrors' own nfsd in a network namespace, its exports and the node's rules to it
#   mirror-metrics.sh   the mirrors' metrics
# (and mirror-s3.sh, the S3 mirrors). Parameters:
#   EFSC_MIRROR_PATHS           node paths under EFSC_EXPORT_PATH, space-separated; empty: no mirror
#   EFSC_MIRROR_FSIDS           the export fsid of each mirror (same order; the same on every node)
#   EFSC_MIRROR_INTERVAL        systemd time span from the end of one sync to the start of the next (e.g. 1min)
#   EFSC_MIRROR_SIZE_MB         size of the file system that holds every mirror
#   EFSC_MIRROR_STORAGE         memory (tmpfs) or disk (ext4 image in EFSC_CACHE_DIR; needs EFSC_NODE_DISK_CACHE=true)
#   EFSC_MIRROR_TIMEOUT_SEC     longest time one sync of one mirror may take
#   EFSC_MIRROR_WORKERS         rsync jobs of one sync at a time
#   EFSC_MIRROR_PORT            TCP port of the node's addresses where clients reach the mirrors' own nfsd
#   EFSC_MIRROR_SOURCE_OPTIONS  mount options of the sync's own origin mount (nosharecache, an attribute cache that
#                               outlives one sync)
#   EFSC_MIRROR_MARKER          the change marker: a path relative to each mirror's root that the publisher updates
#                               after each publish; empty or unset: no marker, every sync walks (mirror_sync)
#   EFSC_MIRROR_FULL_SEC        (with a marker) longest time between two walks of a mirror, whatever its marker says
#   EFSC_MIRROR_MARKER_OPTIONS  (with a marker) mount options of the origin mount kept for the markers' stats alone
#                               (nosharecache, actimeo=0: a stat sees the origin as it is)
#   EFSC_MIRROR_S3_*            the S3 mirrors (lib/mirror-s3.sh); unset: none
# A mirror of EFSC_EXPORT_PATH/app is exported at MIRROR_ROOT/app, an S3 mirror named site at MIRROR_ROOT/site.
# Needs common.sh.

# The root, the namespace and the port are the library's (EFSC_MIRROR_ROOT, EFSC_MIRROR_NAMESPACE, EFSC_MIRROR_PORT:
# a cache node's parameters). The other files of the mirrors use these.
# shellcheck disable=SC2034
MIRROR_ROOT=${EFSC_MIRROR_ROOT-} MIRROR_PORT=${EFSC_MIRROR_PORT-} MIRROR_SOURCE=/run/efs-cache/mirror-source \
  MIRROR_STATE=/run/efs-cache/mirror MIRROR_MARKER=/run/efs-cache/mirror-marker MIRROR_PART_FILES=500

mirror_check() {
  local p n=0 nf=0
  need EFSC_MIRROR_PATHS '^( ?/[A-Za-z0-9._/-]+)*$' 'absolute paths, or empty'
  need EFSC_MIRROR_FSIDS '^( ?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})*$' 'UUIDs, or empty'
  for p in $EFSC_MIRROR_PATHS; do
    [[ "$p/" == "$EFSC_EXPORT_PATH"/?* && "$p/" != */../* && "$p/" != */./* ]] ||
      die "EFSC_MIRROR_PATHS: $p is not under $EFSC_EXPORT_PATH"
    n=$((n + 1))
  done
  for _ in $EFSC_MIRROR_FSIDS; do nf=$((nf + 1)); done
  [ "$n" = "$nf" ] || die "EFSC_MIRROR_FSIDS: $nf fsids for $n mirror paths"
  if [ -n "${EFSC_MIRROR_S3_NAMES:-}" ]; then
    mirror_s3_check
    n=$((n + 1))
  fi
  [ "$n" = 0 ] && return 0
  need EFSC_MIRROR_INTERVAL '^[1-9][0-9]*(s|min|h)$' 'a time span such as 1min'
  need EFSC_MIRROR_SIZE_MB '^[1-9][0-9]{0,7}$' 'MiB, more than 0'
  need EFSC_MIRROR_STORAGE '^(memory|disk)$' 'memory or disk'
  [ "$EFSC_MIRROR_STORAGE" = memory ] || [ "$EFSC_NODE_DISK_CACHE" = true ] || die "EFSC_MIRROR_STORAGE=disk needs EFSC_NODE_DISK_CACHE=true"
  need EFSC_MIRROR_TIMEOUT_SEC '^[1-9][0-9]{0,5}$' 'seconds, more than 0'
  need EFSC_MIRROR_WORKERS '^([1-9]|[1-5][0-9]|6[0-4])$' '1 to 64 jobs'
  need EFSC_MIRROR_SOURCE_OPTIONS "$RE_OPTS" 'mount options'
  need EFSC_MIRROR_MARKER '^([A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*)?$' 'a path relative to each mirror, or empty'
  [ -n "$EFSC_MIRROR_MARKER" ] || return 0
  [[ "/$EFSC_MIRROR_MARKER/" != */../* && "/$EFSC_MIRROR_MARKER/" != */./* ]] ||
    die "EFSC_MIRROR_MARKER='$EFSC_MIRROR_MARKER' is invalid: expected no . or .. component"
  need EFSC_MIRROR_FULL_SEC '^[1-9][0-9]{0,6}$' 'seconds, more than 0'
  need EFSC_MIRROR_MARKER_OPTIONS "$RE_OPTS" 'mount options'
}

mirrors() { [ -n "$EFSC_MIRROR_PATHS" ] || [ -n "${EFSC_MIRROR_S3_NAMES:-}" ]; }

# mirror_each: one line per mirror, "<path under MIRROR_ROOT> <fsid>": the path mirrors, then the S3 mirrors.
mirror_each() {
  local p i=0 fsids=() name fsid rest
  read -ra fsids <<<"$EFSC_MIRROR_FSIDS"
  for p in $EFSC_MIRROR_PATHS; do
    echo "${p#"$EFSC_EXPORT_PATH"} ${fsids[i]}"
    i=$((i + 1))
  done
  [ -z "${EFSC_MIRROR_S3_NAMES:-}" ] || while read -r name fsid rest; do echo "/$name $fsid"; done < <(mirror_s3_each)
}

# Read delegations need leases (fs.leases-enable, on by default): without them nfsd grants none and the mirrors
# lose their point. The units: efs-cache-mirror.timer runs "$SELF --mirror" EFSC_MIRROR_INTERVAL after the end of
# the last sync.
mirror_setup() {
  mirrors || return 0
  put_file /etc/sysctl.d/91-efs-cache-mirror.conf 0644 <<<"fs.leases-enable = 1" || true
  sysctl -qw fs.leases-enable=1 || die "cannot enable leases (fs.leases-enable): nfsd would grant no delegations"
  put_unit efs-cache-mirror.service <<EOF
[Unit]
Description=efs-cache: sync the mirrors $EFSC_MIRROR_PATHS${EFSC_MIRROR_S3_URIS:+ $EFSC_MIRROR_S3_URIS}
After=efs-cache-warm.service
[Service]
Type=oneshot
Nice=10
ExecStart=$SELF --mirror
EOF
  put_unit efs-cache-mirror.timer <<EOF
[Timer]
OnActiveSec=$EFSC_MIRROR_INTERVAL
OnUnitInactiveSec=$EFSC_MIRROR_INTERVAL
AccuracySec=1s
[Install]
WantedBy=timers.target
EOF
  systemd_ctl enable -q --now efs-cache-mirror.timer || die "cannot start efs-cache-mirror.timer"
  put_unit efs-cache-mirror-mountd.service <<EOF
[Unit]
Description=efs-cache: rpc.mountd of the mirrors' nfsd (network namespace $MIRROR_NS)
[Service]
ExecStart=$SELF --mirror-mountd
Restart=on-failure
EOF
  # With nfs-server, every boot, once the first sync is done (efs-cache-warm.service): no empty mirror is served, and
  # what starts or stops nfs-server starts or stops the mirrors' nfsd too.
  put_unit efs-cache-mirror-nfsd.service <<EOF
[Unit]
Description=efs-cache: the mirrors' own nfsd (network namespace $MIRROR_NS, TCP $MIRROR_PORT of the node)
Requires=efs-cache-warm.service
After=efs-cache-warm.service nfs-server.service
PartOf=nfs-server.service
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=$SELF --mirror-serve
ExecStop=$SELF --mirror-down
[Install]
WantedBy=nfs-server.service
EOF
}

# mirror_serve: the mirrors' nfsd up (efs-cache-mirror-nfsd.service, which runs mirror_server_up), then checked.
mirror_serve() {
  local why
  mirrors || return 0
  # Enabled, then loaded before it starts: nfs-server wants it (WantedBy=) from this boot on, not from the next.
  { systemd_ctl enable -q efs-cache-mirror-nfsd.service && systemd_ctl daemon-reload &&
    systemd_ctl start efs-cache-mirror-nfsd.service; } ||
    die "$(journalctl -qu efs-cache-mirror-nfsd -o cat -n 9 | sed -n 's/.*FATAL: //p' | tail -1) (efs-cache-mirror-nfsd failed)"
  wait_for 30 mirror_served >/dev/null || { why=$(mirror_served) || die "the mirrors are not served: $why"; }
  log "serving the mirrors on TCP $MIRROR_PORT: $(mirror_ns cat /proc/fs/nfsd/threads) threads of their own"
}
