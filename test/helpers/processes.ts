/** Process checks for tests that prove a command is really gone. */

import { readFileSync } from "node:fs";

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Waits until `check` holds; the limit only catches a hang, it measures nothing. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  limitMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
