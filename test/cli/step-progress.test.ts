/**
 * `shellwright run` shows a step's output on stderr while the step runs
 * (src/cli/step-progress.ts), through the real CLI; stdout stays one JSON
 * line per step.
 */

import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StepProgress } from "../../src/cli/step-progress.js";
import { bin, cliHome, withoutFastPathWarning } from "../helpers/cli.js";

const home = cliHome();
afterAll(() => home.remove());

describe("run's step output", () => {
  it("comes on stderr while the step still runs; stdout is only the JSON lines", async () => {
    const gate = join(home.runtime, "gate");
    const plan = join(home.runtime, "plan.json");
    writeFileSync(
      plan,
      JSON.stringify([
        { tool: "terminal", args: { command: "echo quick" } },
        { tool: "terminal", args: { command: `echo first; until [ -e ${gate} ]; do sleep 0.02; done; printf second` } },
      ]),
    );
    const child = spawn(process.execPath, [bin, "run", plan], { env: home.env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const whileRunning = await new Promise<{ running: boolean; linesSoFar: number }>((resolve) => {
      // Without progress the step would wait on its gate forever: give up, and let it end.
      setTimeout(() => resolve({ running: false, linesSoFar: -1 }), 40_000).unref();
      child.stderr.on("data", (chunk: Buffer) => {
        err += chunk.toString();
        if (err.includes("first"))
          resolve({ running: child.exitCode === null && !existsSync(gate), linesSoFar: out.split("\n").length - 1 });
      });
    });
    // Step 2 prints while it waits on the gate, before its own JSON line.
    expect(whileRunning).toEqual({ running: true, linesSoFar: 1 });
    writeFileSync(gate, "");
    expect(await new Promise((resolve) => child.once("close", resolve))).toBe(0);
    expect(withoutFastPathWarning(err)).toBe(
      "shellwright run: step 1 (terminal):\nquick\nshellwright run: step 2 (terminal):\nfirst\nsecond\n",
    );
    const lines = out
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { step: number; result: { output: string } });
    expect(lines.map((line) => [line.step, line.result.output])).toEqual([
      [1, "quick\n"],
      [2, "first\nsecond"],
    ]);
  });

  it("names each step once and ends its output on a line of its own", () => {
    let printed = "";
    const progress = new StepProgress((text) => (printed += text));
    progress.write(1, "terminal", "a");
    progress.write(1, "terminal", "b");
    progress.end();
    progress.write(2, "execute_code", "c\n");
    progress.end();
    progress.end();
    expect(printed).toBe("shellwright run: step 1 (terminal):\nab\nshellwright run: step 2 (execute_code):\nc\n");
  });
});
