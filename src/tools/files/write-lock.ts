/**
 * The lock every file-tool write takes on the backend, so that patch's "is the
 * file still what I read?" and its rename are one step that no write_file or
 * other patch can fall between. It lives on the backend (not in this process)
 * because two sessions, two processes or a gateway's callers may write the
 * same file. flock(1) is used where it exists (util-linux, busybox): the
 * kernel drops the lock when its holder dies. Without it, a lock directory
 * holding the owner's PID, broken when that process is gone.
 */

import { createHash } from "node:crypto";

/** Where the locks live: per user, outside any project directory. */
const LOCK_DIR = "/tmp/.shellwright-locks-$UID";
/** A holder only renames and hashes one file; waiting this long means something is wrong. */
const WAIT_SECONDS = 30;

/** The lock's name for one file: a hash of its resolved path. */
export function lockKey(resolved: string): string {
  return createHash("sha256").update(resolved).digest("hex").slice(0, 32);
}

/**
 * Bash that takes the write lock for `resolved` (held until this bash exits),
 * or exits 1 with a message on stderr.
 */
export function takeWriteLock(resolved: string): string {
  const key = lockKey(resolved);
  return [
    `__sw_ld=${LOCK_DIR}`,
    `[ -d "$__sw_ld" ] || mkdir -m 700 -- "$__sw_ld" 2>/dev/null`,
    `if [ ! -d "$__sw_ld" ] || [ -L "$__sw_ld" ] || [ ! -O "$__sw_ld" ]; then echo "cannot use the lock directory $__sw_ld" >&2; exit 1; fi`,
    `if command -v flock >/dev/null 2>&1; then`,
    `  exec {__sw_lk}>"$__sw_ld/${key}" && flock -w ${WAIT_SECONDS} "$__sw_lk" || { echo 'could not take the write lock' >&2; exit 1; }`,
    `else`,
    `  __sw_lm="$__sw_ld/${key}.d"; __sw_i=0`,
    `  until mkdir -- "$__sw_lm" 2>/dev/null; do`,
    `    if { read -r __sw_hp < "$__sw_lm/pid"; } 2>/dev/null && [ -n "$__sw_hp" ] && ! kill -0 "$__sw_hp" 2>/dev/null; then rm -rf -- "$__sw_lm"; continue; fi`,
    `    __sw_i=$((__sw_i + 1)); [ "$__sw_i" -lt ${WAIT_SECONDS * 100} ] || { echo 'could not take the write lock' >&2; exit 1; }`,
    `    sleep 0.01`,
    `  done`,
    `  echo "$BASHPID" > "$__sw_lm/pid"; trap 'rm -rf -- "$__sw_lm"' EXIT`,
    `fi`,
  ].join("\n");
}
