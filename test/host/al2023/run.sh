#!/bin/bash
# The Amazon Linux 2023 (dnf) branch of the instance scripts, run with Debian's real dnf 4 and rpm in a chroot that
# looks like AL2023 to them: /etc/os-release of AL2023 (ID=amzn, ID_LIKE=fedora), a core and a SPAL repository on
# local disk holding stand-in RPMs with AL2023's package names (test/host/al2023/packages.json), each installing a stub of
# the commands the scripts rely on it for. The scripts' own functions run (install_packages of each tier,
# ensure_aws_cli, ensure_efs_utils, metrics_install, label_cache_dir), sourced from assets/ with only their closing
# `main "$@"` left out; nothing else of a bootstrap runs here (no disks, mounts, systemd: the lab's work).
# Needs root (chroot, overlay mounts). Prints one closing line `al2023: N passed, M failed`.
#   AL2023_CACHE_DIR  where the Debian base of the chroot is kept between runs (default /var/cache/cdk-efs-cache/al2023)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
repo=$PWD
started=$SECONDS
cache="${AL2023_CACHE_DIR:-/var/cache/cdk-efs-cache/al2023}"
suite=bookworm
base="$cache/base-$suite-1"

say() { echo "[al2023] $*" >&2; }
if [ "$(id -u)" != 0 ]; then
  say "needs root (debootstrap, chroot, overlay mounts)"
  echo "al2023: 0 passed, 1 failed"
  exit 1
fi

# Tools from Debian's archive, only when missing: dnf and rpm run inside the chroot too (debootstrap installs them).
need=()
for t in rpmbuild:rpm createrepo_c:createrepo-c debootstrap:debootstrap; do
  command -v "${t%%:*}" >/dev/null || need+=("${t#*:}")
done
if [ "${#need[@]}" -gt 0 ]; then
  say "installing ${need[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# The chroot's base: a minimal Debian with dnf and rpm, built once (about 5 minutes, download bound) and kept.
if [ ! -f "$base/.ready" ]; then
  say "building the chroot base in $base"
  rm -rf "$base" && mkdir -p "$cache"
  mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)"
  debootstrap --variant=minbase --include=dnf,rpm "$suite" "$base" "${mirror:-http://deb.debian.org/debian}" \
    >"$cache/debootstrap.log" 2>&1 || { tail -n 20 "$cache/debootstrap.log" >&2; exit 1; }
  rm -f "$base/etc/os-release" # base-files' link: the stand-in system-release owns it, as on AL2023
  touch "$base/.ready"
fi

work="$(mktemp -d /tmp/efsc-al2023.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# Stand-in RPMs, one per package of the data file: noarch, no dependencies, version 0-0. A path starting with / is a
# file the package installs (a command stub that logs its call, or a repository definition); anything else is an RPM
# provide.
repos="$work/repos"
mkdir -p "$repos/core" "$repos/spal"
node -e '
  for (const p of require(process.argv[1]).packages) console.log([p.name, p.repository, p.provides.join(" ")].join("\t"));
' "$repo/test/host/al2023/packages.json" >"$work/packages.tsv"
os_release='NAME="Amazon Linux"
VERSION="2023"
ID="amzn"
ID_LIKE="fedora"
VERSION_ID="2023"
PLATFORM_ID="platform:al2023"
PRETTY_NAME="Amazon Linux 2023 (stand-in)"'
repo_file() { printf '[%s]\nname=%s\nbaseurl=file:///srv/al2023/%s\nenabled=1\ngpgcheck=0\nmetadata_expire=never\n' "$1" "$1" "$2"; }
while IFS=$'\t' read -r name where provides; do
  root="$work/build/$name/root"
  mkdir -p "$root"
  files=() rpm_provides=()
  for f in $provides; do
    if [[ "$f" != /* ]]; then
      rpm_provides+=("$f")
      continue
    fi
    files+=("$f")
    mkdir -p "$root${f%/*}"
    case "$f" in
      /etc/os-release) printf '%s\n' "$os_release" >"$root$f" ;;
      /etc/yum.repos.d/spal.repo) repo_file spal-stand-in spal >"$root$f" ;;
      *) printf '#!/bin/sh\necho "%s $*" >>/var/log/stand-in-calls.log\n' "${f##*/}" >"$root$f" && chmod 755 "$root$f" ;;
    esac
  done
  if [ "$name" = system-release ]; then # the image's own core repository comes with it
    mkdir -p "$root/etc/yum.repos.d" && repo_file amazonlinux-stand-in core >"$root/etc/yum.repos.d/amazonlinux.repo"
    files+=(/etc/yum.repos.d/amazonlinux.repo)
  fi
  {
    printf 'Name: %s\nVersion: 0\nRelease: 0\nSummary: stand-in of %s\nLicense: Apache-2.0\nBuildArch: noarch\nAutoReqProv: no\n' "$name" "$name"
    for p in "${rpm_provides[@]}"; do printf 'Provides: %s = 2023\n' "$p"; done
    printf '%%description\nA stand-in with the name of an Amazon Linux 2023 package, for tests.\n'
    printf '%%install\ncp -a %s/. %%{buildroot}/\n%%files\n' "$root"
    printf '%s\n' "${files[@]}"
  } >"$work/build/$name/$name.spec"
  rpmbuild -bb --quiet --define "_topdir $work/build/$name/top" --define '__os_install_post %{nil}' \
    --define '_build_id_links none' "$work/build/$name/$name.spec" >"$work/build/$name/log" 2>&1 ||
    { cat "$work/build/$name/log" >&2; exit 1; }
  cp "$work/build/$name"/top/RPMS/noarch/*.rpm "$repos/$where/"
done <"$work/packages.tsv"
for r in core spal; do createrepo_c -q "$repos/$r"; done
say "built $(wc -l <"$work/packages.tsv") stand-in RPMs and two repositories ($((SECONDS - started)) s)"

passed=0
failed=0
# run_case NAME BODY: BODY (bash) runs as root in a fresh chroot (an overlay over the base, so no case sees another's
# state), with /opt/t/lib.sh sourced; every line it prints that starts with `ok ` or `not ok ` counts.
run_case() {
  local name="$1" body="$2" d="$work/case-$1" out t=$SECONDS
  mkdir -p "$d/upper" "$d/ovl" "$d/root"
  printf '%s\n' "$body" >"$d/case.sh"
  out="$(unshare --mount --fork bash -s "$base" "$d" "$repos" "$repo" 2>&1 <<'EOF'
set -euo pipefail
base="$1" d="$2" repos="$3" repo="$4"
mount -t overlay overlay -o "lowerdir=$base,upperdir=$d/upper,workdir=$d/ovl" "$d/root"
r="$d/root"
mkdir -p "$r/srv/al2023" "$r/opt/efs-cache" "$r/opt/t/bin"
mount --bind -o ro "$repos" "$r/srv/al2023"
mount --bind -o ro "$repo/assets" "$r/opt/efs-cache"
mount -t proc proc "$r/proc"
cp "$repo/test/host/al2023/lib.sh" "$d/case.sh" "$r/opt/t/"
cp "$repos"/core/system-release-*.rpm "$r/opt/t/"
chroot "$r" /usr/bin/env -i PATH=/opt/t/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C \
  bash -c 'rpm -i --quiet --force-debian /opt/t/system-release-*.rpm && source /opt/t/lib.sh && source /opt/t/case.sh && echo "case finished"'
EOF
  )" || true
  printf '%s\n' "$out" | sed "s/^/  [$name] /" >&2
  local ok no
  ok=$(grep -c '^ok ' <<<"$out" || true)
  no=$(grep -c '^not ok ' <<<"$out" || true)
  if ! grep -qx 'case finished' <<<"$out"; then
    echo "not ok - $name: the case ended early" >&2
    no=$((no + 1))
  fi
  passed=$((passed + ok))
  failed=$((failed + no))
  say "$name: $ok passed, $no failed ($((SECONDS - t)) s)"
}

for f in test/host/al2023/cases/*.sh; do
  n="${f##*/}"
  run_case "${n%.sh}" "$(cat "$f")"
done

say "done in $((SECONDS - started)) s"
echo "al2023: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
