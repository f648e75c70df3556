#!/bin/bash
set -euo pipefail
# RAM cache node (EC2 user-data; parameters in docs/CONTRACT.md): mounts the origin (EFS with efs-utils or plain NFSv4.1,
# or an NFS server over NFSv3 or NFSv4.x: EFSC_ORIGIN_MOUNT_TYPE efs, nfs4 or nfs) and re-exports it read-only
# over NFSv4.1 (and NFSv3 with EFSC_NFS_V3=true), so that the page cache serves hot reads. In order: check the parameters, install the packages,
# tune (sysctl, sunrpc slots), configure nfsd (threads, versions), install a copy of itself and the units that gate
# nfs-server on every boot, mount the origin (bounded by a timeout), apply read-ahead, sync the mirrors for the first
# time and warm the cache, export,
# start nfsd (never restarting a live one), verify, start the re-warm timer, attach the stable ENI.
# A node that cannot mount, warm or export does not serve: its export is withdrawn, nfs-server is stopped, and the
# script exits 1 after one line "efs-cache: FATAL: <reason>".
#   bootstrap.sh          everything (first boot, from cloud-init; running it again on a healthy node changes nothing)
#   bootstrap.sh --warm   read-ahead, the mirrors' first sync of this boot and warming (efs-cache-warm.service every boot, the re-warm timer,
#                         and /usr/local/sbin/efs-cache-warm on demand)
#   bootstrap.sh --metrics  one run of the metrics collector (lib/metrics.sh; efs-cache-metrics.timer)
#   bootstrap.sh --mirror   one sync of the mirrors (lib/mirror-sync.sh; efs-cache-mirror.timer)
#   bootstrap.sh --mirror-serve | --mirror-down   the mirrors' own nfsd up or withdrawn (efs-cache-mirror-nfsd.service)
#   bootstrap.sh --mirror-mountd   rpc.mountd of the mirrors' nfsd (efs-cache-mirror-mountd.service)
#   bootstrap.sh --disk-cache  the second cache level only (EFSC_NODE_DISK_CACHE=true; efs-cache-disk-cache.service
#                         every boot, before the origin mount): FS-Cache on a RAID 0 of the instance store
# Run from a checkout, source the libraries (lib/checkout.sh); in user data the code holds them, before this script.
if ! declare -F die >/dev/null; then
  # shellcheck source-path=SCRIPTDIR source=../lib/checkout.sh
  source "$(dirname "${BASH_SOURCE[0]}")/../lib/checkout.sh"
fi

SELF=/usr/local/lib/efs-cache/cache-node.sh

check_parameters() {
  local p v
  need EFSC_ORIGIN_SERVER "$RE_HOST" 'a host name or address'
  need EFSC_ORIGIN_PATH "$RE_PATH" 'an absolute path'
  need EFSC_ORIGIN_MOUNT_TYPE '^(nfs|nfs4|efs)$' 'nfs, nfs4 or efs'
  need EFSC_ORIGIN_MOUNT_OPTIONS "$RE_OPTS" 'mount options'
  # The options name the type's version: NFSv3 for nfs (an NFS server), NFSv4.1 or 4.2 for nfs4 and efs (the kernel
  # cannot re-export an NFSv4.0 mount, and a mount without nfsvers= would negotiate one).
  p='4\.[12]' v='4.1 or 4.2'
  if [ "$EFSC_ORIGIN_MOUNT_TYPE" = nfs ]; then p=3 v=3; fi
  [[ ",$EFSC_ORIGIN_MOUNT_OPTIONS," =~ ,nfsvers=$p, ]] || die "EFSC_ORIGIN_MOUNT_OPTIONS must name nfsvers=$v for mount type $EFSC_ORIGIN_MOUNT_TYPE"
  need EFSC_EXPORT_PATH "$RE_DIR" 'an absolute path, not /'
  # Not 0: fsid=0 makes an export the NFSv4 pseudo-root, which changes the path clients mount.
  need EFSC_EXPORT_FSID '^([1-9][0-9]{0,9}|[0-9a-fA-F]{8}(-?[0-9a-fA-F]{4}){3}-?[0-9a-fA-F]{12})$' 'a UUID or a number > 0'
  # IPv4 a.b.c.d/1-32 or IPv6 (lower-case hex, no dotted tail)/1-128: no /0 in any spelling (synth refuses the rest).
  local o='(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])' c
  c="(($o\.){3}$o/([1-9]|[12][0-9]|3[0-2])|[0-9a-f:]*:[0-9a-f:]*/([1-9][0-9]?|1[01][0-9]|12[0-8]))"
  need EFSC_EXPORT_CLIENTS "^$c( $c)*$" 'CIDRs with prefix lengths 1-32 (IPv4) or 1-128 (IPv6)'
  for p in MOUNT_TIMEOUT_SEC NFSD_THREADS READ_AHEAD_KB SUNRPC_SLOTS VFS_CACHE_PRESSURE WARM_WORKERS; do
    need "EFSC_$p" "$RE_NUM" 'a number'
  done
  ((EFSC_MOUNT_TIMEOUT_SEC && EFSC_NFSD_THREADS && EFSC_WARM_WORKERS)) || die "timeout, threads and workers must be > 0"
  ((EFSC_SUNRPC_SLOTS > 1 && EFSC_SUNRPC_SLOTS <= 65536)) || die "EFSC_SUNRPC_SLOTS must be 2-65536"
  need EFSC_WARM_PATHS '^( ?/[A-Za-z0-9._/-]+)*$' 'absolute paths, or empty'
  for p in $EFSC_WARM_PATHS; do
    [[ "$p/" == "$EFSC_EXPORT_PATH"/* && "$p/" != */../* ]] || die "EFSC_WARM_PATHS: $p is not under $EFSC_EXPORT_PATH"
  done
  need EFSC_REWARM_INTERVAL '^([1-9][0-9]*(min|h|d|w))?$' 'a time span such as 6h, or empty'
  need EFSC_STABLE_ENI_ID '^(eni-[0-9a-f]{8,17})?$' 'an ENI id, or empty'
  need EFSC_ENA_EXPRESS '^(true)?$' 'true, or absent'
  # Facts the library renders from its constants: the port of mountd (NFSv3) and of the mirrors' nfsd, the mirrors'
  # network namespace and export root (the drain and the mirrors use them).
  need EFSC_MOUNTD_PORT '^[1-9][0-9]{0,4}$' 'a TCP port'
  need EFSC_MIRROR_PORT '^[1-9][0-9]{0,4}$' 'a TCP port'
  ((EFSC_MIRROR_PORT < 65536 && EFSC_MIRROR_PORT != NFS_PORT)) || die "EFSC_MIRROR_PORT=$EFSC_MIRROR_PORT: expected a TCP port other than $NFS_PORT"
  need EFSC_MIRROR_NAMESPACE '^[a-z][a-z0-9-]*$' 'a network namespace name'
  need EFSC_MIRROR_ROOT '^/[A-Za-z0-9._-]+$' 'a directory under /'
  need EFSC_NODE_DISK_CACHE '^(true|false)$' 'true or false'
  if disk_cache; then
    fscache_check
    need EFSC_CACHE_SELF_TEST '^(log|require)$' 'log or require'
    [[ ",$EFSC_ORIGIN_MOUNT_OPTIONS," =~ ,fsc[,=] ]] || die "EFSC_ORIGIN_MOUNT_OPTIONS must contain fsc with EFSC_NODE_DISK_CACHE=true"
    # Initializing the devices (lib/fscache.sh) is for clients only.
    [ "$EFSC_INITIALIZE_DEVICES" = false ] || die "EFSC_INITIALIZE_DEVICES must be false on a cache node"
  fi
  ! v3 || v3_params
  metrics_check
  mirror_check
}

# EFSC_NFS_V3=true: NFSv3 too (v3_* below); absent or anything else: NFSv4.1 only.
v3() { [ "${EFSC_NFS_V3:-}" = true ]; }

# The second cache level: the origin mount keeps what it reads on the instance store too (FS-Cache, lib/fscache.sh),
# so a file the page cache evicted is served from local disk, not the origin.
disk_cache() { [ "$EFSC_NODE_DISK_CACHE" = true ]; }

# Before the origin mount: a transport's sunrpc slot table is sized when it connects. modprobe.d covers sunrpc loaded
# as a module at boot (systemd-sysctl runs before it loads, hence the - that ignores the keys then), sysctl.d a
# built-in one and vfs_cache_pressure; both are applied now too.
tune() {
  local s="$EFSC_SUNRPC_SLOTS"
  put_file /etc/modprobe.d/efs-cache.conf 0644 <<<"options sunrpc tcp_slot_table_entries=$s tcp_max_slot_table_entries=$s" || true
  put_file /etc/sysctl.d/90-efs-cache.conf 0644 <<EOF || true
vm.vfs_cache_pressure = $EFSC_VFS_CACHE_PRESSURE
-sunrpc.tcp_slot_table_entries = $s
-sunrpc.tcp_max_slot_table_entries = $s
EOF
  modprobe sunrpc || true
  sysctl -qw "vm.vfs_cache_pressure=$EFSC_VFS_CACHE_PRESSURE" "sunrpc.tcp_slot_table_entries=$s" \
    "sunrpc.tcp_max_slot_table_entries=$s" || die "could not apply the sysctls"
}

# Debian 12 and Amazon Linux 2023 both start nfsd with a bare `rpc.nfsd` (nfs-server.service), which takes threads and
# versions from [nfsd] in nfs.conf. Debian's /etc/default/nfs-kernel-server RPCNFSDCOUNT reaches only its SysV script
# (seen: ignored under systemd): kept equal, not relied on.
configure_nfsd() {
  local kv k v f=/etc/default/nfs-kernel-server v3=n
  if v3; then v3=y; fi
  for kv in "threads=$EFSC_NFSD_THREADS" "vers3=$v3" vers4=y vers4.0=n vers4.1=y vers4.2=n; do
    k="${kv%%=*}" v="${kv#*=}"
    if [ "$(nfsconf --get nfsd "$k")" != "$v" ]; then
      nfsconf --set nfsd "$k" "$v" || die "nfsconf cannot set [nfsd] $k"
      [ "$(nfsconf --get nfsd "$k")" = "$v" ] || die "[nfsd] $k is overridden in /etc/nfs.conf.d"
    fi
  done
  if [ -f "$f" ] && ! grep -qx "RPCNFSDCOUNT=$EFSC_NFSD_THREADS" "$f"; then
    sed -i '/^RPCNFSDCOUNT=/d' "$f" && echo "RPCNFSDCOUNT=$EFSC_NFSD_THREADS" >>"$f"
  fi
}

# Every boot: origin mount -> efs-cache-warm.service (read-ahead, warming) -> nfs-server, which does not start when
# either failed. Nothing may restart efs-cache-warm.service: through Requires= that would restart nfsd.
# The origin mount is a mount unit, not an fstab line: from fstab, nfs-utils' nfs-server-generator orders nfs-server
# Before= every NFS mount, a cycle with the re-export (seen on Debian 12: systemd then drops the mount at boot).
# TimeoutSec bounds the mount, at boot and on the first run: a hard mount of an unreachable server waits forever.
install_units() {
  local mp="$EFSC_EXPORT_PATH" m
  m=$(systemd-escape -p --suffix=mount "$mp")
  install_self "$SELF"
  put_file /usr/local/sbin/efs-cache-warm 0755 <<<$'#!/bin/sh\nexec '"$SELF --warm" || true
  local after=""
  if disk_cache; then
    fscache_boot_unit efs-cache-disk-cache.service \
      "rebuild or reassemble the node's FS-Cache disk, start cachefilesd, before the origin mount" "$SELF --disk-cache"
    after=$'\nWants=efs-cache-disk-cache.service\nAfter=efs-cache-disk-cache.service'
  fi
  put_unit "$m" <<EOF
[Unit]
Description=efs-cache: origin of the re-export$after
[Mount]
What=$EFSC_ORIGIN_SERVER:$EFSC_ORIGIN_PATH
Where=$mp
Type=$EFSC_ORIGIN_MOUNT_TYPE
Options=$EFSC_ORIGIN_MOUNT_OPTIONS,_netdev
TimeoutSec=$EFSC_MOUNT_TIMEOUT_SEC
[Install]
WantedBy=remote-fs.target
EOF
  put_unit efs-cache-warm.service <<EOF
[Unit]
Description=efs-cache: read-ahead and warming of $mp before nfs-server
RequiresMountsFor=$mp
Before=nfs-server.service
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=$SELF --warm
[Install]
WantedBy=multi-user.target
EOF
  put_unit nfs-server.service.d/efs-cache.conf <<EOF
[Unit]
RequiresMountsFor=$mp
Requires=efs-cache-warm.service
After=efs-cache-warm.service
EOF
  put_unit efs-cache-rewarm.service <<EOF
[Unit]
Description=efs-cache: re-warm $mp
RequiresMountsFor=$mp
[Service]
Type=oneshot
Nice=10
ExecStart=$SELF --warm
EOF
  systemd_ctl enable -q "$m" efs-cache-warm.service
  mkdir -p "$mp"
  if ! mountpoint -q "$mp"; then
    log "mounting the origin $EFSC_ORIGIN_SERVER:$EFSC_ORIGIN_PATH at $mp"
    systemd_ctl start "$m" || die "could not mount the origin $EFSC_ORIGIN_SERVER:$EFSC_ORIGIN_PATH in ${EFSC_MOUNT_TIMEOUT_SEC}s"
  fi
  if disk_cache; then
    [ "$(fsc_of "$mp")" = yes ] || die "the origin is mounted at $mp without FS-Cache (/proc/fs/nfsfs/volumes: FSC no)"
    log "the origin at $mp is cached on $EFSC_CACHE_DIR too (FS-Cache)"
  fi
}

# --warm: read-ahead on the bdi of the origin mount, then every file under EFSC_WARM_PATHS read by parallel readers.
warm() {
  local p=() t
  [[ "$(findmnt -no FSTYPE "$EFSC_EXPORT_PATH")" == nfs* ]] || die "the origin is not mounted at $EFSC_EXPORT_PATH"
  echo "$EFSC_READ_AHEAD_KB" >"/sys/class/bdi/$(mountpoint -d "$EFSC_EXPORT_PATH")/read_ahead_kb" ||
    die "cannot set the read-ahead of $EFSC_EXPORT_PATH"
  # Whether the disk cache serves reads on this kernel (lib/fscache.sh), before anything fills it.
  if disk_cache && ! fscache_self_test "$EFSC_EXPORT_PATH" && [ "$EFSC_CACHE_SELF_TEST" = require ]; then
    die "the disk cache did not serve a re-read (NodeDiskCache.instanceStore requireSelfTest): not serving"
  fi
  # The mirrors' first sync after boot (nothing when done): nfs-server requires this unit, so no empty mirror is served.
  mirror_sync --first
  read -ra p <<<"$EFSC_WARM_PATHS"
  for t in "${p[@]}"; do [ -e "$t" ] || die "warm path $t does not exist"; done
  if [ "${#p[@]}" -eq 0 ]; then return 0; fi
  t=$SECONDS
  log "warming ${p[*]} with $EFSC_WARM_WORKERS readers"
  # A file that vanishes or fails to read while the data set changes is not a reason to stop serving.
  find "${p[@]}" -type f -print0 | xargs -0r -n 32 -P "$EFSC_WARM_WORKERS" cat >/dev/null || warn "some files failed to read"
  log "warmed ${p[*]} in $((SECONDS - t))s"
}

# NFSv3 (EFSC_NFS_V3=true): rpc.mountd on a fixed port that clients name (mountport=, EFSC_MOUNTD_PORT), so no
# client asks rpcbind; nfsd and mountd still register with it on the node.
v3_listens() { [ -n "$(ss -Hltn "sport = :$EFSC_MOUNTD_PORT")" ]; }
# The library renders a number as an NFSv3 node's fsid (a UUID takes 12 bytes more of each handle): exportfs keeps it
# in an int.
v3_params() {
  need EFSC_NFS_V3 '^true$' 'true'
  [[ ! "$EFSC_EXPORT_FSID" =~ ^[0-9]{1,10}$ ]] || ((EFSC_EXPORT_FSID < 2147483648)) || die "EFSC_EXPORT_FSID must be below 2147483648"
}
# nfsd serves NFSv4.1, neither 4.0 nor 4.2, and NFSv3 only when EFSC_NFS_V3=true.
versions_ok() {
  local v
  v=" $(cat /proc/fs/nfsd/versions) "
  [[ "$v" == *" +4.1 "* && "$v" != *" +4.0 "* && "$v" != *" +4.2 "* ]] || return 1
  if v3; then [[ "$v" == *" +3 "* ]]; else [[ "$v" != *" +3 "* ]]; fi
}
v3_up() {
  if [ "$(nfsconf --get mountd port)" != "$EFSC_MOUNTD_PORT" ]; then nfsconf --set mountd port "$EFSC_MOUNTD_PORT" || die "nfsconf cannot set [mountd] port"; fi
  systemd_ctl enable -q --now rpcbind.service || die "rpcbind did not start"
}

# Before serving: an NFSv3 mount of this node's own export, and a stat of an entry below its root through it. A
# re-export's NFSv3 handle is the origin's plus about 22 bytes, in NFSv3's 64: nfsd answers NOTSUPP for a handle that
# does not fit (the export's root has a short one of its own, so only an entry below it shows).
v3_check() {
  local m=/run/efs-cache/v3-check e r=0 o="vers=3,ro,nolock,proto=tcp,port=$NFS_PORT,mountproto=tcp,mountport=$EFSC_MOUNTD_PORT,mountvers=3,soft,timeo=100,retrans=2"
  # mountd reads its port when it starts: one started before nfs.conf said so (Debian's package install) restarts.
  v3_listens || systemd_ctl restart nfs-mountd.service || die "nfs-mountd did not restart"
  wait_for 30 v3_listens || die "rpc.mountd does not listen on port $EFSC_MOUNTD_PORT"
  e=$(find "$EFSC_EXPORT_PATH" -mindepth 1 -maxdepth 2 -print -quit)
  if [ -z "$e" ]; then warn "the origin is empty: no file handle of it checked for NFSv3"; return 0; fi
  mkdir -p "$m"
  if mountpoint -q "$m"; then umount -l "$m"; fi
  timeout -k 5 60 mount -t nfs -o "$o" "127.0.0.1:$EFSC_EXPORT_PATH" "$m" || die "an NFSv3 mount of this node's export failed"
  stat "$m/${e#"$EFSC_EXPORT_PATH"/}" >/dev/null 2>"$m.err" || r=1
  umount "$m"
  ((r == 0)) || die "NFSv3 cannot serve the origin: stat of $e over NFSv3 failed ($(tr -d '\n' <"$m.err")); its re-exported file handles exceed NFSv3's 64 bytes, use clientNfsVersion NfsVersion.NFS_V4_1"
  log "NFSv3: the origin's file handles fit ($e)"
}

exported() {
  [[ "$(exportfs -v | tr -s ' \n\t' ' ')" == *"$EFSC_EXPORT_PATH "*"fsid=$EFSC_EXPORT_FSID"* ]]
}

# Until the node serves, any failure (die or set -e) withdraws the export and stops nfs-server: an on-exit function
# (common.sh's on_exit) that runs before the one added earlier (aws-signal.sh's CloudFormation signal), and is taken
# off the list once the node serves.
unserve_on_failure() {
  if [ "$1" != 0 ]; then
    log "not serving: withdrawing the export, stopping nfs-server"
    rm -f /etc/exports.d/efs-cache.exports
    exportfs -ua
    systemd_ctl stop nfs-server.service
    mirror_server_down
  fi
}

# nfsd is never restarted once something is exported (a known kernel bug hits nfsd restarts): exports change through
# exportfs -ra, threads through /proc/fs/nfsd/threads. Versions need a restart: done only while nothing is exported
# (on Debian the package install starts nfsd with the default versions).
serve() {
  local c o="ro,no_subtree_check,root_squash,sync,insecure,fsid=$EFSC_EXPORT_FSID" l="$EFSC_EXPORT_PATH" v=ok
  for c in $EFSC_EXPORT_CLIENTS; do l+=" $c($o)"; done
  # NFSv3: the node itself too, for v3_check's mount.
  if v3; then l+=" 127.0.0.1($o)"; v3_up; fi
  if systemd_ctl is-active -q nfs-server.service && ! versions_ok; then
    if [ -z "$(exportfs)" ]; then systemd_ctl stop nfs-server.service; else
      v=live
      warn "live nfsd serves $(cat /proc/fs/nfsd/versions), not restarting it: reboot to apply"
    fi
  fi
  if put_file /etc/exports.d/efs-cache.exports 0644 <<<"$l" || ! exported; then exportfs -ra || die "exportfs -ra failed"; fi
  systemd_ctl enable -q --now nfs-server.service || die "nfs-server did not start"
  if [ "$(cat /proc/fs/nfsd/threads)" != "$EFSC_NFSD_THREADS" ]; then echo "$EFSC_NFSD_THREADS" >/proc/fs/nfsd/threads; fi
  [ "$(cat /proc/fs/nfsd/threads)" = "$EFSC_NFSD_THREADS" ] || die "nfsd threads: $(cat /proc/fs/nfsd/threads)"
  versions_ok || [ "$v" = live ] || die "nfsd versions: $(cat /proc/fs/nfsd/versions)"
  exported || die "$EFSC_EXPORT_PATH is not exported with fsid=$EFSC_EXPORT_FSID"
  [ -n "$(ss -Hltn "sport = :$NFS_PORT")" ] || die "nfsd does not listen on port $NFS_PORT"
  ! v3 || v3_check
  log "serving $EFSC_EXPORT_PATH: $(cat /proc/fs/nfsd/threads) threads, versions $(cat /proc/fs/nfsd/versions)"
  mirror_serve
}

# NfsdRequestsQueued, a running total that never goes back: each read adds what pool_stats' packets-arrived grew by
# beyond threads-woken since the previous read, or nothing when threads-woken grew more. The plain difference of the
# two totals is not monotonic (newer kernels wake threads for more than arrivals: seen going back on 6.12), and
# metrics_collect drops a counter that goes back. State in /run (a reboot starts again, as nfsd's counters do); an
# nfsd restart, whose counters start again, adds nothing for that read.
nfsd_queued_read() {
  local st=/run/efs-cache-nfsd-queued a='' w='' pa=0 pw=0 q=0
  read -r a w < <(awk '!/^#/{a+=$2; w+=$4} END{print a+0, w+0}' OFMT=%.0f /proc/fs/nfsd/pool_stats) || true
  [ -n "${w:-}" ] || return 0 # no pool_stats (nfsd stopped): no sample, the state kept
  if [ -f $st ]; then read -r pa pw q <$st || true; fi
  [[ "$a $w $pa $pw $q" =~ ^[0-9]+\ [0-9]+\ [0-9]+\ [0-9]+\ [0-9]+$ ]] || { pa=$a pw=$w q=0; }
  if [ "$a" -ge "$pa" ] && [ "$w" -ge "$pw" ] && [ $((a - pa)) -gt $((w - pw)) ]; then q=$((q + (a - pa) - (w - pw))); fi
  echo "$a $w $q" >$st
  echo "NfsdRequestsQueued c $q"
}

# The node's metrics for lib/metrics.sh (names and meaning: lib/monitoring/metrics.ts). OFMT: no exponent in large values.
# NfsdOps and NfsdBytesRead count the mirrors' own nfsd too (its counters are its namespace's /proc/net/rpc/nfsd).
# With the disk cache, its metrics too (lib/fscache.sh).
metrics_read() {
  local f=(/proc/net/rpc/nfsd)
  mapfile -t -O 1 f < <(mirror_nfsd_stats)
  awk '$1=="rc"{o+=$2+$3+$4} $1=="io"{b+=$2} $1=="Cached:"{print "PageCacheBytes g",$2*1024}
    FILENAME~/ds$/{print "NfsdThreads g",$1}
    END{print "NfsdOps c",o+0; print "NfsdBytesRead c",b+0}' OFMT=%.0f \
    "${f[@]}" /proc/fs/nfsd/threads /proc/meminfo
  nfsd_queued_read
  mirror_metrics_read
  if disk_cache; then fscache_metrics_read; fi
}

# AWS only: attach the ENI that carries the node's stable address as device 1. Skipped when EFSC_STABLE_ENI_ID is empty.
# With EFSC_ENA_EXPRESS=true the attachment has ENA Express on for TCP (the launch template sets the primary's).
attach_stable_eni() {
  local eni="$EFSC_STABLE_ENI_ID" iid r ena=()
  if [ -z "$eni" ]; then return 0; fi
  if [ "$EFSC_ENA_EXPRESS" = true ]; then ena=(--ena-srd-specification EnaSrdEnabled=true); fi
  ensure_aws_cli
  { iid=$(imds meta-data/instance-id) && r=$(imds meta-data/placement/region); } || die "cannot read the instance metadata (IMDSv2)"
  eni_mine() {
    [ "$(aws ec2 describe-network-interfaces --region "$r" --network-interface-ids "$eni" \
      --query 'NetworkInterfaces[0].Attachment.InstanceId' --output text)" = "$iid" ]
  }
  if eni_mine; then return 0; fi
  # The ENI of a replaced node frees up once the old instance is gone: keep trying for a few minutes.
  retry 20 15 aws ec2 attach-network-interface --region "$r" --instance-id "$iid" \
    --network-interface-id "$eni" --device-index 1 "${ena[@]}" >/dev/null || die "could not attach $eni"
  wait_for 120 eni_mine || die "$eni did not attach"
  log "attached $eni"
  mirror_routes_attached
}

# An elastic fleet's node (EFSC_LIFECYCLE_DRAIN_HOOK set): efs-cache-drain.service watches the group's plan for the
# instance (the metadata service's autoscaling/target-lifecycle-state). When it is Terminated, the group has already
# taken the node out of the load balancer, whose deregistration delay has passed and whose connections to it were
# reset; the node then stops both nfsds, so that no client stays on it, checks that nothing serves or is connected
# on NFS_PORT and EFSC_MIRROR_PORT, and only then completes the terminate hook. A node that cannot stop serving leaves the hook to its
# timeout (drainTimeout), after which the group terminates it anyway.
drain_watch() {
  until [ "$(imds_once meta-data/autoscaling/target-lifecycle-state 2>/dev/null)" = Terminated ]; do sleep 5; done
  log "draining: the Auto Scaling group terminates this node"
  systemd_ctl stop efs-cache-mirror.timer efs-cache-mirror-nfsd.service 2>/dev/null || true
  systemd_ctl stop nfs-server.service || warn "nfs-server did not stop cleanly"
  wait_for 60 not_serving ||
    die "still serving after nfs-server stopped: $(nfs_sockets | wc -l) sockets on $NFS_PORT or $EFSC_MIRROR_PORT"
  lifecycle_complete "$EFSC_LIFECYCLE_DRAIN_HOOK" CONTINUE || die "could not complete the lifecycle action of $EFSC_LIFECYCLE_DRAIN_HOOK"
  log "drained"
}

# No nfsd thread, nothing listening on NFS_PORT or EFSC_MIRROR_PORT or connected to them (sockets nfsd closed may linger in FIN-WAIT
# or TIME-WAIT), nothing listening in the mirrors' namespace.
not_serving() {
  [ "$(cat /proc/fs/nfsd/threads 2>/dev/null || echo 0)" = 0 ] && [ -z "$(nfs_sockets)" ] &&
    { ! mirror_ns_exists || [ -z "$(ip netns exec "$MIRROR_NS" ss -Hltn "sport = :$NFS_PORT")" ]; }
}
nfs_sockets() {
  ss -Hltn "( sport = :$NFS_PORT or sport = :$EFSC_MIRROR_PORT )"
  ss -Htn state established "( sport = :$NFS_PORT or sport = :$EFSC_MIRROR_PORT )"
}

drain_setup() {
  [ -n "${EFSC_LIFECYCLE_DRAIN_HOOK:-}" ] || return 0
  put_unit efs-cache-drain.service <<EOF
[Unit]
Description=efs-cache: drain this node when its Auto Scaling group terminates it
After=nfs-server.service
[Service]
ExecStart=$SELF --drain-watch
Restart=on-failure
RestartSec=10
[Install]
WantedBy=multi-user.target
EOF
  systemd_ctl enable -q --now efs-cache-drain.service || die "efs-cache-drain did not start"
  systemd_ctl is-active -q efs-cache-drain.service || die "efs-cache-drain is not running"
}

# EFSC_NODE_IDENTITY=tags: one launch template serves every node of a fleet, and each instance learns which node it is
# from its own tags (propagated by its node's Auto Scaling group, served with instance metadata tags on): the stable
# interface it attaches and the resource it signals. A tag that is absent leaves the variable empty.
node_identity() {
  local k v keys
  need EFSC_NODE_IDENTITY '^(tags|given)$' 'tags or given'
  [ "$EFSC_NODE_IDENTITY" = tags ] || return 0
  command -v curl >/dev/null || ensure_aws_cli # a minimal image has no curl to ask the metadata service with
  keys=$(imds meta-data/tags/instance) || die "cannot read the instance tags (metadata service, instance metadata tags on)"
  for k in stable-eni:EFSC_STABLE_ENI_ID signal-resource:EFSC_SIGNAL_RESOURCE; do
    if grep -qx "cdk-efs-cache:${k%%:*}" <<<"$keys"; then
      v=$(imds "meta-data/tags/instance/cdk-efs-cache:${k%%:*}") || die "cannot read the tag cdk-efs-cache:${k%%:*}"
    else v=''; fi
    printf -v "${k#*:}" %s "$v"
  done
}

# The packages of the first boot (ensure_aws_cli adds curl and the CLI when the stable interface needs them).
# test/host/al2023 runs this with the real dnf against repositories of Amazon Linux 2023's package names.
install_packages() {
  local nfs='nfs-kernel-server'
  if [ "$OS_PKG" = dnf ]; then nfs='nfs-utils'; fi
  if disk_cache; then fscache_packages "$nfs"; else ensure_packages "$nfs"; fi
  # The mirrors' sync walks with find (findutils, on every image) and copies with rsync (core on Amazon Linux 2023).
  if mirrors; then
    ensure_packages rsync nftables
    command -v rsync >/dev/null || die "rsync is not installed: the mirrors cannot be synced"
    command -v nft >/dev/null || die "nft is not installed: the mirrors' nfsd cannot be reached"
    # The S3 mirrors list and fetch with the AWS CLI.
    if [ -n "${EFSC_MIRROR_S3_NAMES:-}" ]; then ensure_aws_cli; fi
  fi
  if [ "$EFSC_ORIGIN_MOUNT_TYPE" = efs ]; then ensure_efs_utils; fi
}

main() {
  # Only the first-boot run tells CloudFormation how it ended (aws-signal.sh; inert without EFSC_SIGNAL_STACK).
  if [ -z "${1:-}" ]; then signal_arm; fi
  if [ -z "${1:-}" ]; then node_identity; fi
  check_parameters
  case "${1:-}" in
    --warm) warm ;;
    --metrics) metrics_collect ;;
    --mirror) mirror_sync ;;
    --mirror-serve) mirror_server_up ;;
    --mirror-down) mirror_server_down ;;
    --mirror-mountd) mirror_ns rpc.mountd --foreground -N 2 -N 3 ;;
    --drain-watch) drain_watch ;;
    --disk-cache) if disk_cache; then fscache_up; fi ;;
    --cachefilesd-heap) cachefilesd_heap_check "${2:-}" ;;
    "")
      detect_os
      install_packages
      on_exit unserve_on_failure
      tune
      configure_nfsd
      # Installed first: the cachefilesd unit runs it after each start (lib/fscache.sh).
      install_self "$SELF"
      if disk_cache; then fscache_up; fi
      install_units
      systemd_ctl start efs-cache-warm.service ||
        die "$(journalctl -qu efs-cache-warm -o cat -n 9 | sed -n 's/.*FATAL: //p' | tail -1) (efs-cache-warm failed)"
      mirror_setup
      serve
      off_exit unserve_on_failure
      # Re-warming brings back what the page cache evicted (EFSC_REWARM_INTERVAL; empty: off).
      if [ -n "$EFSC_REWARM_INTERVAL" ]; then
        put_unit efs-cache-rewarm.timer <<EOF
[Timer]
OnBootSec=$EFSC_REWARM_INTERVAL
OnUnitActiveSec=$EFSC_REWARM_INTERVAL
[Install]
WantedBy=timers.target
EOF
        systemd_ctl enable -q --now efs-cache-rewarm.timer
      fi
      metrics_setup
      attach_stable_eni
      drain_setup
      # An elastic fleet's node joins the load balancer only now, serving, warm, its mirrors synced.
      lifecycle_complete "${EFSC_LIFECYCLE_LAUNCH_HOOK:-}" CONTINUE || die "could not complete the lifecycle action of $EFSC_LIFECYCLE_LAUNCH_HOOK"
      log "cache node ready"
      # Now, not at exit: commands added to the fleet's user data run after this, and never decide the node's result.
      signal_cloudformation SUCCESS
      ;;
    *) die "unknown argument '$1' (use --warm, --metrics, --mirror, --mirror-serve, --mirror-down, --mirror-mountd, --drain-watch, --disk-cache or --cachefilesd-heap PID)" ;;
  esac
}

main "$@"
