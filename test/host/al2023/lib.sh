# shellcheck shell=bash
# Sourced inside the chroot before each case (test/host/al2023/run.sh). The instance scripts' library from assets/, and:
#   - /opt/t/bin first on PATH: dnf and rpm log their call to /opt/t/calls.log and run the real ones; apt-get, apt,
#     dpkg and dpkg-query log and fail (the apt branch must not run); sleep logs and returns at once (retry's pauses);
#     systemctl logs and succeeds (there is no systemd in a chroot);
#   - check DESCRIPTION CMD...: prints `ok - ...` or `not ok - ...`;
#   - load_script FILE: the script's functions, its closing `main "$@"` left out.
A=/opt/efs-cache
CALLS=/opt/t/calls.log
: >"$CALLS"
for c in dnf rpm; do printf '#!/bin/sh\necho "%s $*" >>%s\nexec /usr/bin/%s "$@"\n' "$c" "$CALLS" "$c" >"/opt/t/bin/$c"; done
for c in apt-get apt dpkg dpkg-query; do printf '#!/bin/sh\necho "%s $*" >>%s\nexit 97\n' "$c" "$CALLS" >"/opt/t/bin/$c"; done
for c in sleep systemctl; do printf '#!/bin/sh\necho "%s $*" >>%s\n' "$c" "$CALLS" >"/opt/t/bin/$c"; done
chmod 755 /opt/t/bin/*
hash -r # the rpm that installed system-release was found before these existed

# shellcheck source-path=SCRIPTDIR source=../../../assets/lib/common.sh
source "$A/lib/common.sh"

load_script() {
  [ "$(tail -n 1 "$1")" = 'main "$@"' ] || die "$1 no longer ends with main \"\$@\": update test/host/al2023/lib.sh"
  # shellcheck source=/dev/null
  source <(sed '$d' "$1")
}

check() {
  local what="$1"
  shift
  if "$@"; then echo "ok - $what"; else echo "not ok - $what"; fi
}

# installed PKG...: every PKG is in the rpm database (the real rpm, not the logging one).
installed() {
  local p
  for p in "$@"; do /usr/bin/rpm -q "$p" >/dev/null || { echo "  $p is not installed" >&2; return 1; }; done
}

# commands CMD...: every CMD is on PATH.
commands() {
  local c
  for c in "$@"; do command -v "$c" >/dev/null || { echo "  no $c on PATH" >&2; return 1; }; done
}

# mark: starts a new section of the call log; since_mark: the calls after the last mark.
mark() { echo "--- mark" >>"$CALLS"; }
since_mark() { awk '/^--- mark$/ { n = NR } { l[NR] = $0 } END { for (i = n + 1; i <= NR; i++) print l[i] }' "$CALLS"; }

# dnf_calls_are LINE...: the dnf calls since the last mark are exactly these, in this order.
dnf_calls_are() {
  local want got
  want="$(printf '%s\n' "$@")"
  got="$(since_mark | grep '^dnf ' || true)"
  [ "$got" = "${want%$'\n'}" ] || { printf '  dnf calls were:\n%s\n  expected:\n%s\n' "$got" "$want" >&2; return 1; }
}

no_dnf_or_rpm_install() { ! since_mark | grep -Eq '^dnf |^rpm -[iU]'; }
no_apt() { ! grep -Eq '^(apt-get|apt|dpkg|dpkg-query) ' "$CALLS"; }

# absent PKG...: none of PKG is in the rpm database. no_commands CMD...: none of CMD is on PATH.
absent() {
  local p
  for p in "$@"; do ! /usr/bin/rpm -q "$p" >/dev/null || { echo "  $p is installed" >&2; return 1; }; done
}
no_commands() {
  local c
  for c in "$@"; do ! command -v "$c" >/dev/null || { echo "  $c is on PATH" >&2; return 1; }; done
}

# rpm_queries_since_mark: how many `rpm -q` calls the scripts made after the last mark.
rpm_queries_since_mark() { since_mark | grep -c '^rpm -q ' || true; }
