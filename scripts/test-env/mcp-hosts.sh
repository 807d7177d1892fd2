#!/usr/bin/env bash
# The MCP host apps whose own `mcp add` / `mcp list` commands the tests run
# against `shellwright mcp` (test/mcp/hosts.test.ts): Gemini CLI, Claude Code
# and Codex, from the npm registry, pinned. None needs a model or a login for
# these commands. About 10 s each on an empty npm cache. Idempotent. Prints
# the line that points the tests at them:
#   eval "$(bash scripts/test-env/mcp-hosts.sh)"
set -euo pipefail
DIR=${SHELLWRIGHT_MCP_HOSTS_DIR:-/opt/shellwright-mcp-hosts}
PACKAGES=(@google/gemini-cli@0.61.0 @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0)

want=$(printf '%s\n' "${PACKAGES[@]}")
if [[ $(cat "$DIR/installed" 2>/dev/null) != "$want" ]]; then
  mkdir -p "$DIR"
  # stdout is the export line alone; npm's report goes to stderr.
  npm install --prefix "$DIR" --no-audit --no-fund --no-save "${PACKAGES[@]}" >&2
  printf '%s\n' "$want" >"$DIR/installed"
fi
echo "export SHELLWRIGHT_TEST_MCP_HOSTS=$DIR/node_modules/.bin"
