#!/usr/bin/env bash
# What the file-tool tests need on a fresh machine: ripgrep (search_files tests
# both ripgrep and its grep/find fallback), python3 (execute_code) and GNU patch
# (the unified-diff test applies our diffs with patch(1)). Idempotent.
set -euo pipefail
missing=()
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v patch >/dev/null 2>&1 || missing+=(patch)
command -v gzip >/dev/null 2>&1 || missing+=(gzip)
if ((${#missing[@]} > 0)); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends "${missing[@]}" || { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; }
fi
