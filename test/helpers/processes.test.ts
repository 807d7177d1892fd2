import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { alive, eventually, SPIN_WHILE_OWNER_LIVES, startSpinners } from "./processes.js";

describe("test spinners", () => {
  it("end when their owner is killed, so a killed test run leaves none spinning", async () => {
    // The parent stands in (it may be gone before the spinner starts) for a vitest worker killed with SIGKILL: it cannot stop its spinner itself.
    const parent = spawn("sh", ["-c", `sh -c '${SPIN_WHILE_OWNER_LIVES}' spin $$ & echo $!; exec sleep 600`], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      const [line] = (await once(parent.stdout!, "data")) as [Buffer];
      const spinner = Number(line.toString().trim());
      expect(alive(spinner)).toBe(true);
      parent.kill("SIGKILL");
      await eventually(() => !alive(spinner), "the spinner to end with its parent");
    } finally {
      parent.kill("SIGKILL");
    }
  });

  it("stop at once when asked", async () => {
    const spinners = startSpinners(2);
    expect(spinners.pids.every(alive)).toBe(true);
    spinners.stop();
    await eventually(() => !spinners.pids.some(alive), "the spinners to stop");
  });
});
