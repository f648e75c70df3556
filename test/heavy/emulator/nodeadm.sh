#!/bin/bash
# Builds nodeadm, the program that joins an Amazon Linux 2023 EKS node to its cluster, from the Go module proxy (the only
# version of github.com/awslabs/amazon-eks-ami/nodeadm it serves), into a cache kept between runs; prints the binary's
# path. About 1 minute on two cores on a clean machine (module downloads and compilation), a second once cached.
# EksFleetNodes' user data is checked with its `config check` (eks-node.emu.ts).
set -euo pipefail

VERSION=v0.0.0-20240229193347-cfab22a10647
cache="${EFSC_NODEADM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cdk-efs-cache/nodeadm}/$VERSION"
bin="$cache/bin/nodeadm"
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  # A module cache and build cache of its own: nothing of the user's Go set-up is read or changed.
  GOBIN="$cache/bin" GOPATH="$cache/gopath" GOCACHE="$cache/gocache" GOFLAGS=-modcacherw GOTOOLCHAIN=local \
    go install "github.com/awslabs/amazon-eks-ami/nodeadm/cmd/nodeadm@$VERSION" >&2
  rm -rf "$cache/gocache" "$cache/gopath"
fi
# Check what was built, not go's status alone: the binary runs and knows `config check`.
"$bin" config check --help >/dev/null 2>&1 || { echo "nodeadm.sh: $bin does not run 'config check'" >&2; exit 1; }
echo "$bin"
