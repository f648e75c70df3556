#!/bin/bash
# Leaves nothing of a lab behind when the process that made it is gone, however it died.
#   reaper.sh watch OWNER_PID NETNS RUN_DIR   wait until OWNER_PID exits or RUN_DIR/.alive disappears; if the owner
#                                             died first, kill every process in NETNS, delete NETNS and RUN_DIR
#   reaper.sh sweep                           the same for every lab netns (efsclab-<pid>-*) whose owner is gone
set -euo pipefail

kill_netns() {
  local ns="$1" pids i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    pids="$(ip netns pids "${ns}" 2>/dev/null || true)"
    [[ -n "${pids}" ]] || break
    # shellcheck disable=SC2086 # a list of process ids
    kill -9 ${pids} 2>/dev/null || true
    sleep 0.3
    [[ "${i}" -lt 10 ]] || echo "reaper: processes left in ${ns}: ${pids}" >&2
  done
  ip netns del "${ns}" 2>/dev/null || true
}

remove_run_dir() {
  case "$1" in
    */efsclab-*) rm -rf --one-file-system "$1" ;;
    *) echo "reaper: refusing to remove $1" >&2 ;;
  esac
}

case "${1:-}" in
  watch)
    owner="$2" ns="$3" dir="$4"
    while kill -0 "${owner}" 2>/dev/null && [[ -e "${dir}/.alive" ]]; do sleep 1; done
    if [[ -e "${dir}/.alive" ]]; then
      echo "reaper: owner ${owner} of ${ns} is gone, cleaning up" >&2
      kill_netns "${ns}"
      remove_run_dir "${dir}"
    fi
    ;;
  sweep)
    while read -r ns _; do
      [[ "${ns}" == efsclab-* ]] || continue
      owner="${ns#efsclab-}"
      owner="${owner%%-*}"
      if [[ "${owner}" =~ ^[0-9]+$ ]] && kill -0 "${owner}" 2>/dev/null; then continue; fi
      echo "reaper: removing stale lab network ${ns}" >&2
      kill_netns "${ns}"
    done < <(ip netns list 2>/dev/null || true)
    for dir in "${TMPDIR:-/tmp}"/efsclab-*; do
      [[ -d "${dir}" ]] || continue
      owner="${dir##*/efsclab-}"
      owner="${owner%%-*}"
      if [[ "${owner}" =~ ^[0-9]+$ ]] && kill -0 "${owner}" 2>/dev/null; then continue; fi
      remove_run_dir "${dir}"
    done
    ;;
  *)
    echo "usage: $0 watch OWNER_PID NETNS RUN_DIR | sweep" >&2
    exit 2
    ;;
esac
