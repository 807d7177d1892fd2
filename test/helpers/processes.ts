/** Process checks for tests that prove a command is really gone. */

import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";

/** True while the process exists and is not a zombie (the tests run on the machine the processes run on). */
export function alive(pid: number): boolean {
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/**
 * `alive` for the processes of a backend, whose /proc this test cannot see: a bash script, run there, that prints
 * `alive N` for each of `pids` still running (a zombie counts as gone). A string is a file holding the pid; one
 * without a pid prints `no pid in FILE`, so a check of a process that never started does not pass as "gone".
 */
export function aliveScript(pids: readonly (number | string)[]): string {
  const words = pids.map((pid) => (typeof pid === "number" ? String(pid) : `'${pid}'`)).join(" ");
  return [
    `for w in ${words}; do`,
    `case $w in /*) p=$(cat "$w" 2>/dev/null); [ -n "$p" ] || { echo "no pid in $w"; continue; } ;; *) p=$w ;; esac`,
    // The state follows the last ") ": a process may put ") Z " in its own name.
    `read -r s 2>/dev/null < /proc/$p/stat || continue; s=\${s##*) }; [ "\${s%% *}" = Z ] || echo "alive $p"`,
    "done; true",
  ].join("\n");
}

/**
 * Polls until `check` holds. The limit only catches a hang, it measures nothing:
 * it is generous enough for a machine several times slower than a loaded CI box.
 */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what = "the condition",
  limitMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * A busy loop (`sh -c` with the pid of its owner as $1) that ends when its
 * owner does. The owner's pid is passed in, not read as $PPID: a spinner
 * whose owner died before it started would see its new parent there.
 */
export const SPIN_WHILE_OWNER_LIVES = 'while [ -e "/proc/$1" ]; do :; done';

/**
 * CPU spinners that load the machine for a test. Each spins only while this
 * test process lives, so a killed test run leaves none behind;
 * `stop` ends them at once.
 */
export function startSpinners(count: number): { pids: number[]; stop: () => void } {
  const children: ChildProcess[] = [];
  for (let i = 0; i < count; i++)
    children.push(spawn("sh", ["-c", SPIN_WHILE_OWNER_LIVES, "spin", String(process.pid)], { stdio: "ignore" }));
  return {
    pids: children.map((child) => child.pid ?? -1),
    stop: () => {
      for (const child of children) child.kill("SIGKILL");
    },
  };
}
