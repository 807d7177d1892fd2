import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { alive, aliveScript, eventually, SPIN_WHILE_OWNER_LIVES, startSpinners } from "./processes.js";

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

describe("aliveScript", () => {
  /** Its output, stderr included: the sessions it runs in merge the two. */
  const runScript = (pids: readonly (number | string)[]): string =>
    execFileSync("bash", ["-c", `{\n${aliveScript(pids)}\n} 2>&1`], { encoding: "utf8" });

  it("names the live ones, by pid or by a file holding it; a zombie, an ended process and an empty file are not alive", async () => {
    const dir = mkdtempSync(join(tmpdir(), "alive-script-"));
    // A child whose name (/proc's comm: the name it was run by) holds ") Z ", to fool a check that greps for it,
    // and a zombie: a child its parent never reaps.
    const named = join(dir, "x) Z y");
    symlinkSync(execFileSync("bash", ["-c", "type -P sleep"], { encoding: "utf8" }).trim(), named);
    const parent = spawn("bash", ["-c", `'${named}' 600 & echo $!; sh -c 'exit 0' & echo $!; exec sleep 600`], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      const lines: string[] = [];
      parent.stdout!.on("data", (chunk: Buffer) => lines.push(...chunk.toString().trim().split("\n")));
      await eventually(() => lines.length >= 2, "the two children's pids");
      const [sleeper, zombie] = lines.map(Number) as [number, number];
      expect(readFileSync(`/proc/${sleeper}/stat`, "utf8")).toContain("(x) Z y) S ");
      await eventually(() => !alive(zombie), "the child to exit unreaped");
      writeFileSync(join(dir, "named.pid"), `${sleeper}\n`);
      writeFileSync(join(dir, "empty.pid"), "");
      const gone = spawn("true");
      await once(gone, "exit");
      expect(runScript([sleeper, zombie, gone.pid!, parent.pid!])).toBe(`alive ${sleeper}\nalive ${parent.pid}\n`);
      expect(runScript([join(dir, "named.pid"), join(dir, "empty.pid"), join(dir, "missing.pid")])).toBe(
        `alive ${sleeper}\nno pid in ${join(dir, "empty.pid")}\nno pid in ${join(dir, "missing.pid")}\n`,
      );
      parent.kill("SIGKILL");
      process.kill(sleeper, "SIGKILL");
      await eventually(() => !alive(sleeper), "the named child to end");
      expect(runScript([sleeper, join(dir, "named.pid")])).toBe("");
    } finally {
      parent.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
