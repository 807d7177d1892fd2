/**
 * The kill sweep on its own: where the order of /proc can be arranged (in a
 * new PID namespace, whose PIDs we choose by writing ns_last_pid; root only,
 * skipped elsewhere), and against a newcomer on a wrapper's PID.
 */

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { startTimeOf } from "../../src/backends/local/process-groups.js";
import { parseSweep, sweepScript } from "../../src/core/sweep-script.js";
import { alive, eventually } from "../helpers/processes.js";

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

describe("the kill sweep's wrapper", () => {
  // A newcomer on the PID of a wrapper that is gone: it leads a group and a
  // session of its own, as a reused PID's process may (a shell job, setsid).
  it("leaves a newcomer on the wrapper's PID alone, and its group and session, when the start time differs", async () => {
    const newcomer = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
    const pid = newcomer.pid!;
    try {
      const start = startTimeOf(pid)!;
      const sweepOf = (rootStartTime: string): string =>
        sweepScript({ marks: [], root: pid, rootStartTime, groups: [pid], sessions: [pid] }, "KILL", 0);
      const stale = parseSweep(execFileSync("bash", ["-c", sweepOf(String(Number(start) - 1))], { encoding: "utf8" }));
      expect(stale.hit).toEqual([]);
      expect(alive(pid)).toBe(true);
      // The same sweep with the process's own start time takes it: the one above could have.
      const own = parseSweep(execFileSync("bash", ["-c", sweepOf(start)], { encoding: "utf8" }));
      expect(own.hit).toEqual([`${pid}:${start}`]);
      await eventually(() => !alive(pid), "the wrapper killed");
    } finally {
      if (alive(pid)) process.kill(pid, "SIGKILL");
    }
  });
});
