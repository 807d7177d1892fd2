/**
 * The kill sweep on its own, where the order of /proc can be arranged: in a
 * new PID namespace, whose PIDs we choose by writing ns_last_pid (root only;
 * skipped elsewhere).
 */

import { execFileSync, spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { sweepScript } from "../../src/core/sweep-script.js";

const canChoosePids =
  process.getuid?.() === 0 &&
  spawnSync("unshare", ["-p", "-f", "--mount-proc", "bash", "-c", "echo 99 > /proc/sys/kernel/ns_last_pid"]).status ===
    0;

describe.skipIf(!canChoosePids)("the kill sweep", () => {
  it("takes a child whose PID the walk reaches before its parent's (10000 sorts before 9000)", () => {
    // The call's wrapper is PID 9000; its child 10000 cleared its environment
    // (no mark): only its parent makes it a target, and /proc/10000 comes first in glob order.
    const sweep = sweepScript({ marks: [], root: 9000 }, "TERM", 200);
    const script = [
      "sweep=$1; echo 8999 > /proc/sys/kernel/ns_last_pid",
      "bash -c 'echo 9999 > /proc/sys/kernel/ns_last_pid; env -i sleep 300 & wait' &",
      // Busy-wait: a sleep here would take the PID meant for the child.
      "until [[ -e /proc/10000/stat ]]; do :; done",
      "read -r line < /proc/10000/stat; set -- ${line##*) }",
      '[[ $! == 9000 && $2 == 9000 ]] || { echo "setup: wrapper $!, child parent $2"; exit 1; }',
      'bash -c "$sweep" >/dev/null',
      "read -r line < /proc/10000/stat 2>/dev/null && set -- ${line##*) } && [[ $1 != Z ]] && echo alive || echo gone",
    ].join("\n");
    const output = execFileSync("unshare", ["-p", "-f", "--mount-proc", "bash", "-c", script, "bash", sweep], {
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(output).toBe("gone\n");
  });
});
