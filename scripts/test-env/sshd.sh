#!/usr/bin/env bash
# An OpenSSH server of the tests' own: 127.0.0.1 only, a free port, a
# throwaway host key and client key, key-only login. Idempotent: a second
# `start` reuses the running server. Runnable by hand:
#
#   eval "$(scripts/test-env/sshd.sh start)"   # exports SHELLWRIGHT_TEST_SSH*
#   npx vitest run test/backends/ssh/transport.test.ts
#   scripts/test-env/sshd.sh stop
#
# Commands: start | stop | env | restart (drops every connection; same port and
# keys) | down (stops the server and its connections, keeps port and keys) | up
# SHELLWRIGHT_SSHD_DIR picks the state directory (default /tmp/sw-test-sshd),
# so a test can run a second, private server.
#
# Debian's bash reads ~/.bashrc for every `ssh host cmd`; root's here runs
# `pyenv init`, about 250 ms per command, which would push the compat suite's
# property tests past their time limit. So by default this server starts
# sessions with SHLVL=1, which makes bash skip it (a test that wants the real
# thing sets SHELLWRIGHT_SSHD_READ_BASHRC=1; bench/ssh.mjs measures both).
set -euo pipefail

dir=${SHELLWRIGHT_SSHD_DIR:-/tmp/sw-test-sshd}
sshd_bin=/usr/sbin/sshd
log() { printf 'sshd.sh: %s\n' "$*" >&2; }

install_packages() {
  local missing=()
  [[ -x $sshd_bin ]] || missing+=(openssh-server)
  command -v ssh >/dev/null || missing+=(openssh-client)
  command -v rsync >/dev/null || missing+=(rsync)
  ((${#missing[@]})) || return 0
  log "installing ${missing[*]}"
  # Keep the package from starting the system's own sshd on port 22.
  local policy=/usr/sbin/policy-rc.d ours=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && ours=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  ((ours)) && rm -f "$policy"
  return 0
}

listener_pid() {
  local pid
  [[ -f $dir/sshd.pid ]] || return 1
  pid=$(<"$dir/sshd.pid")
  [[ -n $pid && -d /proc/$pid ]] || return 1
  # The pid file may outlive the server: check it is our sshd.
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$dir/sshd_config" || return 1
  echo "$pid"
}

# Every process below the listener: one per connection and what runs in it.
descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    echo "$child"
    descendants "$child"
  done
}

# A zombie counts as gone: with no init to reap it, it would never go.
any_alive() {
  local pid stat
  for pid; do
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
    stat=${stat##*) }
    [[ ${stat:0:1} == Z ]] || return 0
  done
  return 1
}

kill_server() {
  local pid pids p servers="" others=""
  pid=$(listener_pid) || return 0
  pids="$pid $(descendants "$pid" | tr '\n' ' ')"
  for p in $pids; do
    [[ $(cat "/proc/$p/comm" 2>/dev/null) == sshd* ]] && servers+="$p " || others+="$p "
  done
  # The connections drop at once, as when a host goes away: sshd gets no
  # chance to pass on an exit status from a command that dies meanwhile.
  # shellcheck disable=SC2086
  kill -KILL $servers 2>/dev/null || true
  # shellcheck disable=SC2086
  kill -TERM $others 2>/dev/null || true
  for _ in $(seq 50); do
    # shellcheck disable=SC2086
    any_alive $pids || return 0
    sleep 0.1
  done
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
}

env_lines() {
  cat <<EOF
export SHELLWRIGHT_TEST_SSH=1
export SHELLWRIGHT_TEST_SSH_HOST=127.0.0.1
export SHELLWRIGHT_TEST_SSH_PORT=$(<"$dir/port")
export SHELLWRIGHT_TEST_SSH_USER=$(id -un)
export SHELLWRIGHT_TEST_SSH_KEY=$dir/client_ed25519
export SHELLWRIGHT_TEST_SSH_KNOWN_HOSTS=$dir/known_hosts
export SHELLWRIGHT_TEST_SSHD_DIR=$dir
EOF
}

client_works() {
  ssh -F none -o BatchMode=yes -o ConnectTimeout=5 -o StrictHostKeyChecking=yes \
    -o UserKnownHostsFile="$dir/known_hosts" -i "$dir/client_ed25519" -p "$(<"$dir/port")" \
    "$(id -un)@127.0.0.1" true </dev/null >/dev/null 2>&1
}

free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

launch() {
  mkdir -p /run/sshd # privilege separation directory, required by Debian's sshd
  chmod 755 /run/sshd
  "$sshd_bin" -f "$dir/sshd_config" -E "$dir/sshd.log"
  for _ in $(seq 100); do
    client_works && return 0
    sleep 0.1
  done
  log "sshd did not accept a login; its log:"
  tail -20 "$dir/sshd.log" >&2 || true
  return 1
}

start() {
  install_packages
  if listener_pid >/dev/null && client_works; then
    env_lines >"$dir/env"
    env_lines
    return 0
  fi
  kill_server
  rm -rf "$dir"
  mkdir -m 700 -p "$dir"
  ssh-keygen -q -t ed25519 -N '' -C shellwright-test-host -f "$dir/host_ed25519"
  ssh-keygen -q -t ed25519 -N '' -C shellwright-test-client -f "$dir/client_ed25519"
  cp "$dir/client_ed25519.pub" "$dir/authorized_keys"
  chmod 600 "$dir/authorized_keys"
  free_port >"$dir/port"
  local port
  port=$(<"$dir/port")
  printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$dir/host_ed25519.pub")" >"$dir/known_hosts"
  cat >"$dir/sshd_config" <<EOF
# Written by scripts/test-env/sshd.sh: a test server, loopback only, key only.
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_ed25519
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
AllowUsers $(id -un)
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
# The state directory lives under /tmp, which StrictModes would refuse.
StrictModes no
# Parallel commands share one connection: allow more than the default 10 channels.
MaxSessions 64
MaxStartups 64
Subsystem sftp internal-sftp
LogLevel VERBOSE
EOF
  # pyenv's rehash in this machine's profile waits PYENV_REHASH_TIMEOUT for a lock a
  # killed login shell may have left (vitest.config.ts bounds it for local shells).
  # sshd takes the first SetEnv line only: one line for both.
  if [[ ${SHELLWRIGHT_SSHD_READ_BASHRC:-0} == 1 ]]; then
    echo "SetEnv PYENV_REHASH_TIMEOUT=2" >>"$dir/sshd_config"
  else
    echo "SetEnv SHLVL=1 PYENV_REHASH_TIMEOUT=2" >>"$dir/sshd_config"
  fi
  launch
  env_lines >"$dir/env"
  log "listening on 127.0.0.1:$port (state in $dir)"
  env_lines
}

case ${1:-start} in
  start) start ;;
  stop) kill_server && rm -rf "$dir" ;;
  restart | down | up)
    [[ -f $dir/sshd_config ]] || { log "no server in $dir; run start first"; exit 1; }
    [[ $1 == up ]] || kill_server
    [[ $1 == down ]] || launch
    ;;
  env) env_lines ;;
  *) log "usage: $0 start|stop|env|restart|down|up"; exit 2 ;;
esac
