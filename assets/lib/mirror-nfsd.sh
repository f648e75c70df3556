#!/bin/bash
set -euo pipefail
# The mirrors' own nfsd (see mirror.sh) and the export lines it serves. Needs common.sh and mirror.sh.

# The export lines of the mirrors for the clients in EFSC_EXPORT_CLIENTS, with options OPTIONS (no fsid).
mirror_exports() {
  local o="$1" r f c l
  while read -r r f; do
    l="$MIRROR_ROOT$r"
    for c in $EFSC_EXPORT_CLIENTS; do l+=" $c($o,fsid=$f)"; done
    printf '%s\n' "$l"
  done < <(mirror_each)
}

mirror_exported() {
  local r f e
  e="$(mirror_ns exportfs -v | tr -s ' \n\t' ' ')"
  while read -r r f; do
    [[ "$e" == *"$MIRROR_ROOT$r "*"fsid=$f"* ]] || return 1
  done < <(mirror_each)
}

# The mirrors' own nfsd. Linux runs one nfsd per network namespace, with its own threads: the mirrors are served by
# the nfsd of a namespace of their own (MIRROR_NS), so readers of the re-export that hang every thread of the node's
# nfsd on an origin that no longer answers never hold up a mirror. Clients reach it on TCP EFSC_MIRROR_PORT of the
# node's own addresses: a DNAT rule (nftables) sends those connections over a veth pair to the namespace's
# 169.254.204.2:NFS_PORT, keeping the client's address (the exports name the same clients as the re-export's). The
# namespace's nfsd serves NFSv4.1 only, with the node's thread count and a grace period of 10 s (the kernel keeps no
# client records for a namespace without nfsdcld, so nothing could be reclaimed in a longer one: read-only clients
# open again); its rpc.mountd (efs-cache-mirror-mountd.service) answers the kernel's export lookups from an exports
# file and state directory of its own.
MIRROR_NS=${EFSC_MIRROR_NAMESPACE-} MIRROR_VETH=efscm0 MIRROR_NS_ADDR=169.254.204.2 MIRROR_HOST_ADDR=169.254.204.1
MIRROR_NS_STATE=/run/efs-cache/mirror-nfsd MIRROR_NFSCTL=/run/efs-cache/mirror-nfsctl

# mirror_ns_exists: the mirrors' namespace is there (never when EFSC_MIRROR_NAMESPACE is not given).
mirror_ns_exists() { [ -n "$MIRROR_NS" ] && [ -e "/run/netns/$MIRROR_NS" ]; }

# mirror_ns CMD...: CMD in the mirrors' namespace, in a mount namespace of its own where /proc/fs/nfsd is that
# namespace's nfsd, /var/lib/nfs its state directory, /etc/exports and /etc/nfs.conf its own (ip netns exec binds the
# files of /etc/netns/<name> over /etc's), and the node's rpcbind is out of reach (the kernel would otherwise clear
# the node's nfsd registrations through its socket when the namespace's nfsd starts).
mirror_ns() {
  # shellcheck disable=SC2016
  ip netns exec "$MIRROR_NS" /bin/bash -euo pipefail -c 'mount -t nfsd nfsd /proc/fs/nfsd
    mount --bind "$0" /var/lib/nfs
    if [ -S /run/rpcbind.sock ]; then mount --bind /dev/null /run/rpcbind.sock; fi
    exec "$@"' "$MIRROR_NS_STATE" "$@"
}

# The namespace, its veth pair and the node's DNAT and forwarding rules (made again at every boot: none of it is
# kept), its configuration files, then its nfsd, exports and mountd. Idempotent.
mirror_server_up() {
  local o="ro,no_subtree_check,root_squash,sync,insecure"
  [ -e "/run/netns/$MIRROR_NS" ] || ip netns add "$MIRROR_NS" || die "cannot make the network namespace $MIRROR_NS"
  if ! ip link show "$MIRROR_VETH" >/dev/null 2>&1; then
    ip link add "$MIRROR_VETH" type veth peer name eth0 netns "$MIRROR_NS" || die "cannot make the veth pair $MIRROR_VETH"
  fi
  { ip addr replace "$MIRROR_HOST_ADDR/30" dev "$MIRROR_VETH" && ip link set "$MIRROR_VETH" up &&
    ip -n "$MIRROR_NS" addr replace "$MIRROR_NS_ADDR/30" dev eth0 && ip -n "$MIRROR_NS" link set eth0 up &&
    ip -n "$MIRROR_NS" link set lo up && ip -n "$MIRROR_NS" route replace default via "$MIRROR_HOST_ADDR"; } ||
    die "cannot address the veth pair $MIRROR_VETH"
  mirror_routes
  sysctl -qw net.ipv4.ip_forward=1 || die "cannot enable IPv4 forwarding for the mirrors' namespace"
  mkdir -p /etc/exports.d "/etc/netns/$MIRROR_NS/exports.d" "$MIRROR_NS_STATE" "$MIRROR_NFSCTL"
  if [ -d /etc/nfs.conf.d ]; then mkdir -p "/etc/netns/$MIRROR_NS/nfs.conf.d"; fi
  put_file "/etc/netns/$MIRROR_NS/nfs.conf" 0644 <<EOF || true
# efs-cache: the mirrors' nfsd (network namespace $MIRROR_NS)
[nfsd]
threads=$EFSC_NFSD_THREADS
grace-time=10
vers3=n
vers4=y
vers4.0=n
vers4.1=y
vers4.2=n
EOF
  put_file "/etc/netns/$MIRROR_NS/exports" 0644 < <(mirror_exports "$o") || true
  touch "$MIRROR_NS_STATE/etab" "$MIRROR_NS_STATE/rmtab"
  # The namespace's nfsd control files stay mounted here, in the node's mount namespace: the kernel stops a
  # namespace's nfsd threads when the last mount of its control files goes (mirror_ns's mounts end with each command).
  if ! findmnt -rn --mountpoint "$MIRROR_NFSCTL" >/dev/null; then
    nsenter --net="/run/netns/$MIRROR_NS" mount -t nfsd nfsd "$MIRROR_NFSCTL" || die "cannot mount the nfsd control files of $MIRROR_NS"
  fi
  mirror_ns exportfs -ra || die "exportfs -ra failed in $MIRROR_NS"
  if [ "$(cat "$MIRROR_NFSCTL/threads")" = 0 ]; then mirror_ns rpc.nfsd "$EFSC_NFSD_THREADS" || die "rpc.nfsd failed in $MIRROR_NS"; fi
  systemd_ctl start efs-cache-mirror-mountd.service || die "cannot start efs-cache-mirror-mountd.service"
}

# mirror_routes: the node's nftables rules for the mirrors' port, made again when its interfaces or their routes
# changed (mirror_server_up, and every sync: an interface attached after boot, such as the stable address of device 1,
# is picked up within an interval). A connection to TCP EFSC_MIRROR_PORT of any address of the node (or from the node
# itself) goes to the namespace's nfsd; the node forwards those connections alone, every other forwarded packet is
# dropped. Each connection's packets, both ways, are routed by the interface it came in on: a connection is marked
# with that interface's index (plus MIRROR_MARK), its packets take the mark, and a routing rule per interface looks
# them up in a table of that interface's own routes plus the namespace's (the reverse-path filter checks them there
# too: src_valid_mark). By the main table alone, a reply to a client that came in by the stable address would leave by
# device 0 with the stable address as its source, which EC2's source/destination check drops, and a strict
# reverse-path filter would drop the request.
MIRROR_MARK=$((0x20500000))
mirror_routes() {
  local d i l m err sig="" rules="" devs=()
  mkdir -p "$MIRROR_STATE"
  mapfile -t devs < <(ip -4 route show table main default | awk '{ for (i = 1; i < NF; i++) if ($i == "dev") print $(i + 1) }' | sort -u)
  for d in "${devs[@]}"; do
    [ "$d" != "$MIRROR_VETH" ] || continue
    i=$(cat "/sys/class/net/$d/ifindex") || continue
    sig+="$d $i $(ip -4 route show table main dev "$d" | tr '\n' ';')"$'\n'
  done
  [ "${sig%$'\n'}" != "$(cat "$MIRROR_STATE/routes" 2>/dev/null)" ] || return 0
  while ip rule del priority 20500 2>/dev/null; do :; done
  while read -r d i l; do
    [ -n "$d" ] || continue
    m=$((MIRROR_MARK + i))
    rules+="    iifname \"$d\" fib daddr type local tcp dport $MIRROR_PORT ct state new ct mark set $m"$'\n'
    ip route flush table "$m" 2>/dev/null || true
    while read -r -d ';' l; do
      l=${l//linkdown/} l=${l//dead/}
      # shellcheck disable=SC2086 # one route, word by word
      ip route replace $l dev "$d" table "$m" || warn "mirrors: cannot copy the route '$l' of $d to table $m"
    done <<<"$(ip -4 route show table main dev "$d" | tr '\n' ';')"
    { ip route replace "${MIRROR_HOST_ADDR%.*}.0/30" dev "$MIRROR_VETH" table "$m" &&
      ip rule add priority 20500 fwmark "$m" lookup "$m"; } || die "cannot add the mirrors' routing rule for $d"
  done <<<"$sig"
  sysctl -qw net.ipv4.conf.all.src_valid_mark=1 || die "cannot set net.ipv4.conf.all.src_valid_mark"
  if ! err=$(nft -f - 2>&1 <<EOF
table ip efs_cache_mirror
delete table ip efs_cache_mirror
table ip efs_cache_mirror {
  chain marks {
    type filter hook prerouting priority mangle; policy accept;
$rules    ct mark $((MIRROR_MARK + 1))-$((MIRROR_MARK + 0xffff)) meta mark set ct mark
  }
  chain prerouting {
    type nat hook prerouting priority dstnat; policy accept;
    fib daddr type local tcp dport $MIRROR_PORT dnat to $MIRROR_NS_ADDR:$NFS_PORT
  }
  chain output {
    type nat hook output priority -100; policy accept;
    fib daddr type local tcp dport $MIRROR_PORT dnat to $MIRROR_NS_ADDR:$NFS_PORT
  }
  chain forward {
    type filter hook forward priority filter; policy drop;
    oifname "$MIRROR_VETH" ip daddr $MIRROR_NS_ADDR tcp dport $NFS_PORT ct status dnat accept
    iifname "$MIRROR_VETH" ip saddr $MIRROR_NS_ADDR tcp sport $NFS_PORT ct status dnat accept
  }
}
EOF
  ); then die "cannot load the nftables rules of the mirrors: $(tr '\n' ' ' <<<"$err")"; fi
  printf %s "$sig" >"$MIRROR_STATE/routes"
  log "mirrors: TCP $MIRROR_PORT of ${devs[*]} to the mirrors' nfsd, each connection routed by the interface it came in on"
}

# mirror_routes_attached: after the stable address's interface is attached (first boot), the mirrors' rules for it
# as soon as it has its routes (the next sync would make them too).
mirror_routes_attached() {
  mirrors || return 0
  wait_for 60 mirror_default_routes 2 || warn "mirrors: no default route by the attached interface after 60 s; the next sync retries"
  (mirror_routes) || warn "mirrors: cannot update the rules of TCP $MIRROR_PORT"
}
mirror_default_routes() { [ "$(ip -4 route show table main default | wc -l)" -ge "$1" ]; }

# mirror_served: the mirrors' nfsd serves, checked on the process, the kernel and the rules, not on unit states:
# mountd runs in the namespace, its nfsd has its threads and NFSv4.1, listens on NFS_PORT, exports each mirror with its
# fsid, and the node's DNAT rule and forwarding are in place. Prints what is missing.
mirror_served() {
  local p v
  for p in $(ip netns pids "$MIRROR_NS" 2>/dev/null); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" != rpc.mountd ] || break; done
  [ "$(cat "/proc/${p:-0}/comm" 2>/dev/null)" = rpc.mountd ] || { echo "no rpc.mountd in $MIRROR_NS"; return 1; }
  v=" $(mirror_ns cat /proc/fs/nfsd/versions) "
  { [ "$(mirror_ns cat /proc/fs/nfsd/threads)" = "$EFSC_NFSD_THREADS" ] && [[ "$v" == *" +4.1 "* && "$v" == *" -3 "* ]]; } ||
    { echo "nfsd in $MIRROR_NS: threads $(mirror_ns cat /proc/fs/nfsd/threads), versions$v"; return 1; }
  [ -n "$(ip netns exec "$MIRROR_NS" ss -Hltn "sport = :$NFS_PORT")" ] || { echo "no nfsd listens on $NFS_PORT in $MIRROR_NS"; return 1; }
  mirror_exported || { echo "exports in $MIRROR_NS: $(mirror_ns exportfs -v | tr -s ' \n\t' ' ')"; return 1; }
  [[ "$(nft list chain ip efs_cache_mirror prerouting 2>&1)" == *"dport $MIRROR_PORT dnat to $MIRROR_NS_ADDR:$NFS_PORT"* ]] ||
    { echo "no DNAT rule for TCP $MIRROR_PORT"; return 1; }
  [ "$(sysctl -n net.ipv4.ip_forward)" = 1 ] || { echo "IPv4 forwarding is off"; return 1; }
}

# mirror_nfsd_stats: the counters of the mirrors' nfsd (/proc/net/rpc/nfsd as a process of its namespace sees it),
# nothing when none runs.
mirror_nfsd_stats() {
  local p
  for p in $(ip netns pids "$MIRROR_NS" 2>/dev/null); do
    if [ -r "/proc/$p/net/rpc/nfsd" ]; then echo "/proc/$p/net/rpc/nfsd"; return 0; fi
  done
}

# Withdraws the mirrors (a node that does not serve): no export, no thread, no mountd in the namespace.
mirror_server_down() {
  mirror_ns_exists || return 0
  systemd_ctl stop efs-cache-mirror-mountd.service
  mirror_ns exportfs -ua
  mirror_ns rpc.nfsd 0
  umount "$MIRROR_NFSCTL" 2>/dev/null || true
}
