#!/bin/bash
# Packs the library with `npm pack` from a tree without dist/ (its prepack script must build what main and types
# point at), checks that the tarball holds them, LICENSE and every file README.md links to, installs it into a new,
# separate CDK app in a temporary folder and synthesizes it there: proves the published files (compiled JS, .d.ts,
# assets/) are enough for a user.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cd "$root"
rm -rf dist
tarball="$(npm pack --silent --pack-destination "$work" | tail -n 1)"
echo "packed: $tarball ($(du -k "$work/$tarball" | cut -f1) KiB)"
if tar -tzf "$work/$tarball" | grep -E '^package/(test|bin|lib)/' >/dev/null; then
  echo "FAIL: the package ships sources or tests:" >&2
  tar -tzf "$work/$tarball" | grep -E '^package/(test|bin|lib)/' >&2
  exit 1
fi
tar -tzf "$work/$tarball" >"$work/files.txt"
for file in "$(node -p "require('./package.json').main")" "$(node -p "require('./package.json').types")" LICENSE; do
  if ! grep -qxF "package/$file" "$work/files.txt"; then
    echo "FAIL: the package lacks $file" >&2
    exit 1
  fi
done
# npm and Construct Hub show README.md without the repository: each file it links to must be in the package.
sed 's#^package/##' "$work/files.txt" >"$work/shipped.txt"
npx ts-node --transpile-only test/package/readme-links.ts README.md "$work/shipped.txt"

app="$work/app"
mkdir -p "$app"
cd "$app"
cdk_lib_version="$(node -p "require('$root/node_modules/aws-cdk-lib/package.json').version")"
constructs_version="$(node -p "require('$root/node_modules/constructs/package.json').version")"
cat > package.json <<JSON
{ "name": "consumer-app", "version": "0.0.0", "private": true }
JSON
npm install --no-audit --no-fund --silent --prefer-offline \
  "$work/$tarball" "aws-cdk-lib@$cdk_lib_version" "constructs@$constructs_version" >/dev/null
cat > app.js <<'JS'
const { App, Stack } = require('aws-cdk-lib');
const ec2 = require('aws-cdk-lib/aws-ec2');
const { CachedFileSystem } = require('cdk-efs-cache');
const app = new App({ outdir: 'cdk.out' });
const stack = new Stack(app, 'Consumer');
const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
const cfs = new CachedFileSystem(stack, 'Data', { vpc });
const assembly = app.synth();
const template = assembly.getStackByName('Consumer').template;
const types = Object.values(template.Resources).map((r) => r.Type);
if (!types.includes('AWS::EFS::FileSystem')) throw new Error('no EFS file system in the consumer template');
console.log(`consumer app synthesized ${types.length} resources with ${cfs.constructor.name}`);
JS
node app.js
# The type declarations must compile for a TypeScript user too.
cat > check.ts <<'TS'
import { CachedFileSystem, CachedFileSystemProps } from 'cdk-efs-cache';
export const probe: Array<unknown> = [CachedFileSystem];
export type P = CachedFileSystemProps;
TS
"$root/node_modules/.bin/tsc" --noEmit --strict --esModuleInterop --skipLibCheck --module commonjs --target es2022 check.ts
echo "pack-and-synth: ok"
