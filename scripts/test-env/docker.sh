#!/usr/bin/env bash
# Makes a real Docker Engine and the test image available, for the docker
# backend's tests. Idempotent: each step is skipped when its result is there.
#   1. installs Debian's docker.io (and mmdebstrap) when dockerd is missing;
#   2. starts dockerd in the background when `docker info` fails;
#   3. builds the test image without any registry (mmdebstrap from this
#      machine's own apt sources, then `docker import`) unless it exists;
#   4. makes from it the image E2B's own tests run in behind serve: the same
#      with E2B's home, /home/user (a container's change, committed).
# Run as root. Prints the image name on its last line.
set -euo pipefail

IMAGE="${SHELLWRIGHT_DOCKER_IMAGE:-shellwright-test:bookworm}"
E2B_IMAGE="${SHELLWRIGHT_DOCKER_E2B_IMAGE:-shellwright-test-e2b:bookworm}"
SUITE="${SHELLWRIGHT_DOCKER_SUITE:-bookworm}"
# vim-tiny: the PTY tests drive an editor (test/tools/process/pty.test.ts).
PACKAGES="bash,coreutils,procps,python3,ripgrep,rsync,vim-tiny"
LOG="${SHELLWRIGHT_DOCKERD_LOG:-/var/log/shellwright-dockerd.log}"

log() { printf 'test-env/docker: %s\n' "$*" >&2; }

need_packages=()
command -v dockerd >/dev/null 2>&1 || need_packages+=(docker.io)
command -v mmdebstrap >/dev/null 2>&1 || need_packages+=(mmdebstrap)
if ((${#need_packages[@]})); then
  log "installing ${need_packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "${need_packages[@]}" >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q "${need_packages[@]}" >/dev/null; }
fi

if ! docker info >/dev/null 2>&1; then
  log "starting dockerd (log: $LOG)"
  setsid nohup dockerd >"$LOG" 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { log "dockerd did not come up; see $LOG"; tail -20 "$LOG" >&2; exit 1; }
fi

# The image records its package list in a label: an image built from an older
# list (one without vim-tiny) is built again.
built_with="$(docker image inspect --format '{{index .Config.Labels "shellwright.packages"}}' "$IMAGE" 2>/dev/null || true)"
if [[ $built_with == "$PACKAGES" ]]; then
  log "image $IMAGE exists"
else
  log "building $IMAGE ($SUITE, minbase + $PACKAGES)"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  # The machine's own apt sources (deb822 or one-line), so no host name is
  # written here; the snapshot mirror's Release files are past Valid-Until.
  sources=()
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -s $f ]] && sources+=("$f")
  done
  ((${#sources[@]})) || { log "no apt sources found under /etc/apt"; exit 1; }
  mmdebstrap --quiet --variant=minbase --include="$PACKAGES" \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    "$SUITE" "$work/rootfs.tar" "${sources[@]}"
  docker import --change 'CMD ["bash"]' --change "LABEL shellwright.packages=$PACKAGES" "$work/rootfs.tar" "$IMAGE" >/dev/null
  log "built $IMAGE"
fi
# Made again whenever the test image is newer than it.
base_id="$(docker image inspect --format '{{.Id}}' "$IMAGE")"
e2b_base="$(docker image inspect --format '{{index .Config.Labels "shellwright.base"}}' "$E2B_IMAGE" 2>/dev/null || true)"
if [[ $e2b_base == "$base_id" ]]; then
  log "image $E2B_IMAGE exists"
else
  log "making $E2B_IMAGE ($IMAGE with /home/user)"
  cid="$(docker run -d "$IMAGE" mkdir -p /home/user)"
  docker wait "$cid" >/dev/null
  docker commit --change "LABEL shellwright.base=$base_id" --change 'CMD ["bash"]' "$cid" "$E2B_IMAGE" >/dev/null
  docker rm "$cid" >/dev/null
fi
echo "$IMAGE"
