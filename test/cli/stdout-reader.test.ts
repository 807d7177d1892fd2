/**
 * A reader of stdout that goes away (`| head -1`): the built CLI ends quietly
 * with 141 (128 + SIGPIPE, as `cat` does), writes nothing more, and stops what
 * it was running; the processes are proven gone by pid.
 */

import { spawn, type ChildProcessByStdio } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { alive, eventually } from "../helpers/processes.js";

import { bin, withoutFastPathWarning } from "../helpers/cli.js";
let dir: string;
let started: number[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sw-reader-gone-"));
  started = [];
});
afterEach(() => {
  // Only what this test started, by pid, if a failure left it running.
  for (const pid of started) if (alive(pid)) process.kill(pid, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[]): {
  child: ChildProcessByStdio<null, Readable, Readable>;
  exited: Promise<number | null>;
  stderr: () => string;
} {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: dir,
    env: { ...process.env, SHELLWRIGHT_HOME: dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child.pid!);
  let stderr = "";
  child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, stderr: () => withoutFastPathWarning(stderr) };
}

/** Reads stdout until its first line, then closes the read end, as `head -1` does. */
async function firstLineThenClose(stdout: Readable): Promise<string> {
  const line = await new Promise<string>((resolve) => {
    let text = "";
    const onData = (data: Buffer): void => {
      text += data.toString();
      if (text.includes("\n")) {
        stdout.off("data", onData);
        resolve(text.slice(0, text.indexOf("\n")));
      }
    };
    stdout.on("data", onData);
  });
  stdout.destroy();
  return line;
}

const pidIn = (file: string): number => Number(readFileSync(join(dir, file), "utf8").trim());

describe("a reader of stdout that goes away", () => {
  it("is known once the write that failed has settled, before anything else starts", async () => {
    // The error event alone comes a tick after the write; a caller that starts the next step in between runs it.
    const script = [
      `const { watchStdoutReader } = await import(${JSON.stringify(join(import.meta.dirname, "../../dist/cli/stdout-reader.js"))});`,
      "const reader = watchStdoutReader();",
      "await new Promise((resolve) => setTimeout(resolve, 200));",
      'await reader.write("after the reader left\\n");',
      "process.stderr.write(String(reader.gone()));",
    ].join("\n");
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    started.push(child.pid!);
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
    await new Promise((resolve) => child.on("exit", resolve));
    expect(stderr).toBe("true");
  });

  it("run: exits 141 quietly, plays no further step, and the session's processes are gone", async () => {
    const plan = join(dir, "plan.json");
    writeFileSync(
      plan,
      JSON.stringify({
        environment: { backend: "local", cwd: dir },
        steps: [
          { tool: "terminal", args: { command: "echo $$ > bg.pid; exec sleep 300", background: true } },
          // Ends once the reader is gone: its line is the write that fails.
          { tool: "terminal", args: { command: "while [ ! -e reader-gone ]; do sleep 0.05; done; echo two" } },
          // Started, it would outlive the stop's SIGTERM: the failed write must keep it from starting at all.
          { tool: "terminal", args: { command: "trap '' TERM INT HUP; touch step3-ran" } },
        ],
      }),
    );
    const run = cli(["run", plan]);
    expect(JSON.parse(await firstLineThenClose(run.child.stdout))).toMatchObject({ step: 1, tool: "terminal" });
    await eventually(() => existsSync(join(dir, "bg.pid")) && pidIn("bg.pid") > 0, "the background step's pid");
    const background = pidIn("bg.pid");
    started.push(background);
    writeFileSync(join(dir, "reader-gone"), "");
    expect(await run.exited).toBe(141);
    // Quietly: no message; only step 2's own output, which run shows on stderr as it comes.
    expect(run.stderr()).not.toMatch(/^shellwright(?! run: step \d+ \(terminal\):$)/m);
    expect(existsSync(join(dir, "step3-ran"))).toBe(false);
    expect(alive(background)).toBe(false);
  });

  it("exec: stops the command (its pid is gone) and exits 141 quietly", async () => {
    const exec = cli(["exec", "echo $$ > yes.pid; exec yes"]);
    expect(await firstLineThenClose(exec.child.stdout)).toBe("y");
    await eventually(() => existsSync(join(dir, "yes.pid")) && pidIn("yes.pid") > 0, "the command's pid");
    started.push(pidIn("yes.pid"));
    // Without the fix the command runs on forever; the limit only catches that.
    await eventually(() => exec.child.exitCode !== null, "shellwright exec to end");
    expect(await exec.exited).toBe(141);
    expect(exec.stderr()).toBe("");
    expect(alive(pidIn("yes.pid"))).toBe(false);
  });
});
