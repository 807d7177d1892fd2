/**
 * A call's wrapper named by PID and start time: a kill that comes after the
 * wrapper is gone must not signal the group of a newcomer on that PID.
 */

import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { reusedPid, startTimeOf } from "../../../src/backends/local/process-groups.js";
import { alive } from "../../helpers/processes.js";

describe("reusedPid", () => {
  it("tells the process that started at a time from a newcomer on its PID, and says nothing of a gone one", async () => {
    const child = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
    const pid = child.pid!;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      const start = startTimeOf(pid);
      expect(start).toMatch(/^\d+$/);
      expect(reusedPid(pid, start)).toBe(false);
      expect(reusedPid(pid, String(Number(start) - 1))).toBe(true);
      // Unknown start time: nothing to compare, so not a newcomer.
      expect(reusedPid(pid, undefined)).toBe(false);
    } finally {
      child.kill("SIGKILL");
    }
    await exited;
    expect(alive(pid)).toBe(false);
    expect(startTimeOf(pid)).toBeUndefined();
    expect(reusedPid(pid, "1")).toBe(false);
  });
});
