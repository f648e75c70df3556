#!/bin/bash
set -euo pipefail
# Shared functions of the instance scripts. lib/instance/user-data.ts writes this file, whole, into every instance's
# code asset ahead of the script; a script run from a checkout sources it instead. Defines functions, NFS_PORT and
# the RE_* formats only: nothing runs on load.

# log MESSAGE: one line with the efs-cache: prefix on stderr (cloud-init's log, or the journal under systemd),
# plus a copy in the journal when stderr is not already connected to it.
log() {
  printf 'efs-cache: %s\n' "$*" >&2
  if [ "$(stat -Lc %d:%i /proc/self/fd/2)" != "${JOURNAL_STREAM:-}" ] && command -v logger >/dev/null; then
    logger -t efs-cache -- "$*" 2>/dev/null || true
  fi
}
warn() { log "WARN: $*"; }
# die REASON: the one-line reason a run failed, then exit 1. Never inside $(...) or a pipe: it would end only a subshell.
die() {
  log "FATAL: $*"
  exit 1
}

# on_exit FUNCTION: FUNCTION runs when the script exits, given its exit status as $1, before those added earlier
# (last added, first run); off_exit FUNCTION takes it off the list. The scripts set no EXIT trap of their own: this
# one runs the list, each function with errexit off, so that one failing does not keep the next from running, and
# exits with the script's status.
on_exit() {
  off_exit "$1"
  EFS_CACHE_ON_EXIT=("$1" ${EFS_CACHE_ON_EXIT[@]+"${EFS_CACHE_ON_EXIT[@]}"})
  trap run_on_exit EXIT
}
off_exit() {
  local f kept=()
  for f in ${EFS_CACHE_ON_EXIT[@]+"${EFS_CACHE_ON_EXIT[@]}"}; do [ "$f" = "$1" ] || kept+=("$f"); done
  EFS_CACHE_ON_EXIT=(${kept[@]+"${kept[@]}"})
}
run_on_exit() {
  local rc=$? f
  set +e
  for f in ${EFS_CACHE_ON_EXIT[@]+"${EFS_CACHE_ON_EXIT[@]}"}; do "$f" "$rc"; done
  exit "$rc"
}

# need VAR REGEX WHAT: VAR must match REGEX (an unset or empty VAR fails unless REGEX allows empty; unset becomes empty).
need() {
  printf -v "$1" %s "${!1-}"
  [[ "${!1}" =~ $2 ]] || die "$1='${!1}' is invalid: expected $3"
}
# The TCP port of NFS: the node's nfsd, the mirrors' nfsd inside its namespace, and the NFSv3 mounts that name it.
# shellcheck disable=SC2034
NFS_PORT=2049
# Formats shared by the scripts' parameter checks: host name or address, absolute path, absolute path other than /,
# comma-separated mount options, a number from 0 to 99999 without leading zeros.
# shellcheck disable=SC2034
RE_HOST='^[A-Za-z0-9][A-Za-z0-9.:-]*$' RE_PATH='^/[A-Za-z0-9._/-]*$' RE_DIR='^/[A-Za-z0-9._/-]*[A-Za-z0-9._-]$' \
  RE_OPTS='^[A-Za-z0-9,=._:/-]+$' RE_NUM='^(0|[1-9][0-9]{0,4})$'

# detect_os: OS_PKG=dnf (Amazon Linux 2023) or apt (Debian, Ubuntu), from /etc/os-release. Amazon Linux 2 (and the
# first Amazon Linux) say ID=amzn too, but have yum and no dnf, and none of the packages by AL2023's names.
detect_os() {
  local ids version
  # shellcheck source=/dev/null
  ids=$(. /etc/os-release && echo " ${ID:-} ${ID_LIKE:-} ")
  # shellcheck source=/dev/null
  version=$(. /etc/os-release && echo "${VERSION_ID:-}")
  case "$ids" in
    *" amzn "*)
      case "$version" in
        1 | 2 | 201[0-9].*) die "unsupported OS: Amazon Linux $version (need Amazon Linux 2023, Debian or Ubuntu)" ;;
      esac
      OS_PKG=dnf
      ;;
    *" fedora "*) OS_PKG=dnf ;;
    *" debian "*) OS_PKG=apt ;;
    *) die "unsupported OS:$ids(need Amazon Linux 2023, Debian or Ubuntu)" ;;
  esac
}

pkg_installed() {
  if [ "$OS_PKG" = apt ]; then
    [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]
  else
    rpm -q "$1" >/dev/null 2>&1
  fi
}

# ensure_packages PKG...: installs the missing ones; calls no package manager when nothing is missing.
ensure_packages() {
  local p m=()
  for p in "$@"; do pkg_installed "$p" || m+=("$p"); done
  if [ "${#m[@]}" -eq 0 ]; then return 0; fi
  log "installing ${m[*]}"
  if [ "$OS_PKG" = apt ]; then
    export DEBIAN_FRONTEND=noninteractive
    p="-qy -o DPkg::Lock::Timeout=300"
    # shellcheck disable=SC2086 # $p holds several options
    { retry 3 10 apt-get $p update && retry 3 10 apt-get $p -o Dpkg::Options::=--force-confold \
      install --no-install-recommends "${m[@]}"; } || die "could not install ${m[*]}"
  else
    retry 3 10 dnf -qy install "${m[@]}" || die "could not install ${m[*]}"
  fi
}

# imds PATH: GET http://169.254.169.254/latest/PATH with an IMDSv2 token (the library's launch templates require v2).
# The service can be slow or throttle under load (EC2 documents throttling), so a failed read is tried 3 times.
imds() {
  retry 3 2 imds_once "$1"
}
imds_once() {
  local t
  t=$(curl -fsS -m 5 -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 300' http://169.254.169.254/latest/api/token) &&
    curl -fsS -m 5 -H "X-aws-ec2-metadata-token: $t" "http://169.254.169.254/latest/$1"
}

# ensure_aws_cli: curl (for the metadata service) and the AWS CLI, which minimal images lack (AL2023 minimal has neither).
ensure_aws_cli() {
  [ -n "${OS_PKG:-}" ] || detect_os
  command -v curl >/dev/null || ensure_packages "$([ "$OS_PKG" = dnf ] && echo curl-minimal || echo curl)"
  command -v aws >/dev/null || ensure_packages "$([ "$OS_PKG" = dnf ] && echo awscli-2 || echo awscli)"
}

# ensure_efs_utils: the efs mount helper. Amazon Linux 2023 has amazon-efs-utils in its core repository; Debian and
# Ubuntu package it nowhere, so there the image must bring it.
ensure_efs_utils() {
  command -v mount.efs >/dev/null && return 0
  [ "$OS_PKG" = dnf ] || die "mount type efs needs amazon-efs-utils, which Debian and Ubuntu do not package: use an image that has it installed, or Amazon Linux 2023"
  ensure_packages amazon-efs-utils
}

# retry TRIES DELAY CMD...: runs CMD until it succeeds, at most TRIES times, DELAY seconds apart.
retry() {
  local n="$1" d="$2" i=1
  shift 2
  until "$@"; do
    if [ "$i" -ge "$n" ]; then return 1; fi
    log "retry $i/$n: $*"
    sleep "$d"
    i=$((i + 1))
  done
}

# wait_for SECONDS CMD...: polls CMD every second until it succeeds; returns 1 when SECONDS have passed.
wait_for() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    if [ "$SECONDS" -ge "$end" ]; then return 1; fi
    sleep 1
  done
}

# mount_within SECONDS WHAT MOUNTPOINT [MOUNT-ARGS...]: mounts MOUNTPOINT (`mount MOUNT-ARGS`, or without them its
# fstab entry), trying again until it is mounted or SECONDS have passed: then returns 1, with the last try's error
# (one line, empty when the bound cut the try) in MOUNT_ERROR. A failed try is logged as "mounting WHAT failed
# (ERROR), retrying", and the next one starts 5 s later (1 s when the bound is closer than that). Each try is bounded
# by the time left: a hard mount of an unreachable server would wait forever, and mount.nfs itself gives up after its
# own retry time (2 minutes in the foreground) when the server refuses or is not exporting yet, so an instance that
# boots beside servers that are still booting tries again, up to the whole bound.
mount_within() {
  local end=$((SECONDS + $1)) what="$2" mp="$3" left
  shift 3
  (($#)) || set -- "$mp"
  MOUNT_ERROR=
  until mountpoint -q "$mp"; do
    left=$((end - SECONDS))
    if [ "$left" -le 0 ]; then return 1; fi
    MOUNT_ERROR=$(timeout -k 10 "$left" mount "$@" 2>&1) && continue
    MOUNT_ERROR="${MOUNT_ERROR//$'\n'/ }"
    if mountpoint -q "$mp"; then return 0; fi
    left=$((end - SECONDS))
    if [ "$left" -le 0 ]; then return 1; fi
    log "mounting $what failed (${MOUNT_ERROR:-timed out}), retrying"
    sleep "$((left > 5 ? 5 : 1))"
  done
}

# put_file PATH MODE < CONTENT: writes PATH only when CONTENT differs; returns 0 when it changed PATH, 1 when not.
# Feed it with <<EOF, <<< or < <(...), not with a pipe, so that its die ends the script.
put_file() {
  local t
  { mkdir -p "${1%/*}" && t=$(mktemp "$1.XXXXXX") && cat >"$t"; } || die "cannot write $1"
  if [ -f "$1" ] && cmp -s "$t" "$1"; then
    rm -f "$t"
    return 1
  fi
  { chmod "$2" "$t" && mv -f "$t" "$1"; } || die "cannot write $1"
  log "wrote $1"
}

# put_unit NAME < CONTENT: writes /etc/systemd/system/NAME (a unit or a drop-in). systemd loads what changed at the next
# systemd_ctl call (below): one daemon-reload for the several units a boot writes, not one each (a reload costs seconds
# on a busy first boot).
put_unit() {
  if put_file "/etc/systemd/system/$1" 0644; then units_changed=1; fi
}

# systemd_ctl ARGS...: systemctl, after a daemon-reload when put_unit changed a unit since the last one, so that no
# call of these scripts starts, enables or queries a unit as systemd knew it before. `enable` makes its links with
# --no-reload: they are for the next boots (this boot's targets are reached already, and --now starts the unit), and
# systemctl's own reload after enabling cost a second reload per call (4 s against 0.2 s in a lab VM alone). A unit
# that another must pull in during this boot is enabled, then loaded with `systemd_ctl daemon-reload` (mirror.sh).
systemd_ctl() {
  if [ -n "${units_changed:-}" ]; then
    units_changed=
    [ "${1:-}" = daemon-reload ] || systemctl daemon-reload || return
  fi
  if [ "${1:-}" = enable ]; then
    systemctl enable --no-reload "${@:2}"
  else
    systemctl "$@"
  fi
}

# install_self DEST: installs the caller's complete text (parameters, library, script) at DEST for the boot units.
# As user-data the running file is already complete; run from a checkout, the header, the libraries in
# EFS_CACHE_LIB (colon-separated) and the awk programs' functions (lib/checkout.sh) are added.
install_self() {
  local src="${BASH_SOURCE[1]}" v f
  [ -f "$src" ] || die "cannot read my own file ($src) to install it: run me from a file"
  put_file "$1" 0755 < <(
    if [ -n "${EFS_CACHE_LIB:-}" ]; then
      printf '#!/bin/bash\nset -euo pipefail\n'
      for v in "${!EFSC_@}"; do printf 'export %s=%q\n' "$v" "${!v}"; done
      IFS=: read -ra v <<<"$EFS_CACHE_LIB"
      cat "${v[@]}"
      for f in $(compgen -A function efs_cache_awk_); do declare -f "$f"; done
    fi
    cat "$src"
  ) || true
}
