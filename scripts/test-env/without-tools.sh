#!/usr/bin/env bash
# Runs a command as on a machine that lacks some tools, to check that the
# tests adapt (a fresh machine may have no ripgrep, python3, patch...).
# Stripping PATH is not enough: a login shell's /etc/profile puts /usr/bin
# back. So, in a private mount namespace (bubblewrap), each of /usr/bin,
# /usr/sbin and /usr/local/bin is replaced by a directory of links to its
# real entries minus the named tools. Nothing on the machine changes.
#   bash scripts/test-env/without-tools.sh rg python3 -- npx vitest run test/x.test.ts
# A name ending in * drops every entry it prefixes (python3* also drops python3.11).
set -euo pipefail
drop=()
while (($#)) && [[ $1 != -- ]]; do drop+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
(($#)) || { echo "usage: $0 TOOL... -- COMMAND..." >&2; exit 2; }
command -v bwrap >/dev/null || { echo "$0 needs bubblewrap (apt-get install bubblewrap)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/sw-without-XXXXXX")
trap 'rm -rf "$work"' EXIT
mounts=()
for dir in /usr/bin /usr/sbin /usr/local/bin; do
  [[ -d $dir && ! -L $dir ]] || continue
  key=${dir//\//_}
  mkdir -p "$work/real$key" "$work/stub$key"
  for entry in "$dir"/* "$dir"/.[!.]*; do
    [[ -e $entry || -L $entry ]] || continue
    name=${entry##*/}
    for pattern in "${drop[@]}"; do
      # shellcheck disable=SC2053 # the pattern is meant to glob
      [[ $name == $pattern ]] && continue 2
    done
    # A relative link (npx -> ../lib/...) must keep pointing where it did.
    if [[ -L $entry ]]; then target=$(readlink -f "$entry") || continue; else target=$work/real$key/$name; fi
    ln -s "$target" "$work/stub$key/$name"
  done
  mounts+=(--ro-bind "$dir" "$work/real$key" --ro-bind "$work/stub$key" "$dir")
done
# Version-manager shims (pyenv) would find them again; read-only, so that a
# profile's `pyenv init` cannot recreate them.
mkdir "$work/empty"
for shims in "$HOME"/.pyenv/shims; do
  [[ -d $shims ]] && mounts+=(--ro-bind "$work/empty" "$shims")
done
# Not exec: the trap removes the link directories afterwards.
bwrap --dev-bind / / "${mounts[@]}" -- "$@"
