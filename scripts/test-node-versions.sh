#!/usr/bin/env bash
# `npm run test:node-versions`: `npm test` on Node 22 and 24 besides the machine's own Node
# (package.json: engines >= 20.18.1; Portico must run on 20, 22 and 24). The binaries come from
# the npm registry's node-linux-<arch> packages, so no other download source is needed, and are
# cached in node_modules/.cache/node-versions. NODE_VERSIONS="22 24" picks the major versions.
set -euo pipefail
cd "$(dirname "$0")/.."
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "test-node-versions: no node-linux package for $(uname -m)" >&2; exit 2 ;;
esac
cache="node_modules/.cache/node-versions"
for major in ${NODE_VERSIONS:-22 24}; do
  dir="$cache/$major"
  if [ ! -x "$dir/package/bin/node" ]; then
    mkdir -p "$dir"
    tgz=$(cd "$dir" && npm pack --silent "node-linux-$arch@$major")
    tar xzf "$dir/$tgz" -C "$dir"
    rm "$dir/$tgz"
  fi
  echo "== npm test on Node $("$dir/package/bin/node" -v)"
  PATH="$PWD/$dir/package/bin:$PATH" npm test
done
