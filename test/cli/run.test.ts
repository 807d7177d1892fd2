/** `shellwright run`: plays a plan, prints one JSON line per call, --check compares with expect. */

import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseCommand, UsageError } from "../../src/cli/args.js";
import { run as runPlan } from "../../src/cli/run.js";
import { run as runSpec } from "../../src/cli/specs.js";
import { matchExpected, parsePlan } from "../../src/cli/plan.js";

// The CLI's notes go to fd 2 directly (core/stderr.ts, tested on its own); here they go where this file reads stderr.
vi.mock("../../src/core/stderr.js", () => ({ writeStderr: (text: string | Uint8Array) => process.stderr.write(text) }));

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "sw-run-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Parses the args as main.ts does and runs the subcommand; returns its exit code with what it printed. */
async function run(args: string[]): Promise<{ code: number; lines: Record<string, unknown>[]; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  // Calls the write's callback as a real stream does: run waits for it before the next step.
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk, encodingOrDone?, done?) => {
    out.push(String(chunk));
    (typeof encodingOrDone === "function" ? encodingOrDone : done)?.();
    return true;
  });
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => (err.push(String(chunk)), true));
  try {
    let code: number;
    try {
      code = await runPlan(parseCommand(runSpec, args));
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      err.push(error.message);
      code = 2;
    }
    const lines = out
      .join("")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    return { code, lines, stderr: err.join("") };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

function planFile(plan: unknown): string {
  const path = join(dir, `plan-${Math.random().toString(16).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(plan));
  return path;
}

describe("shellwright run", () => {
  it("plays examples/smoke.json and every check passes", async () => {
    const { code, lines } = await run(["examples/smoke.json", "--check"]);
    expect(code).toBe(0);
    expect(lines).toHaveLength(7);
    expect(lines.map((line) => line.check)).toEqual(Array(7).fill("pass"));
    expect(lines[2]).toMatchObject({ step: 3, tool: "terminal", result: { output: "hi from /tmp\n", exit_code: 0 } });
  });

  it("plays a shipped example by name (--example smoke), from any directory", async () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const { code, lines } = await run(["--example", "smoke", "--check"]);
      expect(code).toBe(0);
      expect(lines.map((line) => line.check)).toEqual(Array(7).fill("pass"));
    } finally {
      process.chdir(cwd);
    }
    expect(await run(["--example", "nope"])).toMatchObject({
      code: 2,
      stderr: 'unknown example "nope"; the package ships: matrix, smoke',
    });
    expect(await run(["x.json", "--example", "smoke"])).toMatchObject({
      code: 2,
      stderr: "give PLAN.json or --example smoke, not both",
    });
  });

  it("exits 1 on a mismatch and says what differs", async () => {
    const plan = planFile([
      { tool: "terminal", args: { command: "echo one" }, expect: { output: "two\n" } },
      { tool: "terminal", args: { command: "echo three" }, expect: { output: { $contains: "three" } } },
    ]);
    const { code, lines } = await run([plan, "--check"]);
    expect(code).toBe(1);
    expect(lines[0]).toMatchObject({ check: "fail", mismatches: ['result.output: expected "two\\n", got "one\\n"'] });
    expect(lines[1]).toMatchObject({ check: "pass" });
    // Without --check the same plan is only played.
    const played = await run([plan]);
    expect(played.code).toBe(0);
    expect(played.lines[0]!.check).toBeUndefined();
  });

  it("passes results on to later steps and reports skipped steps", async () => {
    const plan = planFile({
      steps: [
        { tool: "terminal", args: { command: "echo bg", background: true } },
        {
          tool: "process",
          args: { action: "wait", session_id: "${1.session_id}" },
          expect: { status: "exited", output: "bg\n" },
        },
        { tool: "write_file", args: {}, skip: "not yet" },
      ],
    });
    const { code, lines } = await run([plan, "--backend", "local", "--check"]);
    expect(code).toBe(0);
    expect(lines[1]).toMatchObject({ check: "pass" });
    expect(lines[2]).toEqual({ step: 3, tool: "write_file", skipped: "not yet" });
  });

  it("refuses a plan with a step naming a tool it cannot call before anything runs: exit 2, the step and the tool", async () => {
    const marker = join(dir, "ran-before-the-bad-step");
    const plan = planFile([
      { tool: "terminal", args: { command: `touch ${marker}` } },
      { tool: "exec_command", args: { cmd: "echo hi" } },
    ]);
    const { code, lines, stderr } = await run([plan, "--backend", "local"]);
    expect(code).toBe(2);
    expect(lines).toEqual([]);
    expect(stderr).toBe(
      `shellwright run: cannot use the plan ${plan}: step 2 names the tool "exec_command", which a plan cannot call; the tools are: terminal, process, read_file, write_file, patch, search_files, execute_code\n`,
    );
    expect(existsSync(marker)).toBe(false);
    // A skipped step's tool is checked too.
    expect(await run([planFile([{ tool: "teleport", skip: "later" }])])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('step 1 names the tool "teleport"'),
    });
  });

  it("refuses before anything runs: bad arguments, a reference to a later or skipped step, a $regex that does not compile", async () => {
    const marker = join(dir, "ran-before-a-bad-plan");
    const first = { tool: "terminal", args: { command: `touch ${marker}` } };
    const cases: [unknown[], string][] = [
      [[first, { tool: "terminal", args: { comand: "ls" } }], "step 2 (terminal) has bad arguments: "],
      [
        [first, { tool: "read_file", args: { path: 42 } }],
        "step 2 (read_file) has bad arguments: path must be a string",
      ],
      [
        [first, { tool: "process", args: { action: "poll", session_id: "${3.session_id}" } }, first],
        "step 2.args uses ${3.…}, but a step can use only the results of the steps before it (1 to 1)",
      ],
      [
        [
          { ...first, skip: "off" },
          { tool: "process", args: { action: "poll", session_id: "${1.session_id}" } },
        ],
        "step 2.args uses ${1.…}, but step 1 is skipped and has no result",
      ],
      [
        [first, { tool: "process", args: { action: "poll", session_id: "${1.session_id}", sesion: 1 } }],
        'unknown argument "sesion" for process',
      ],
      [[{ ...first, expect: { output: { $regex: "([" } } }], "step 1.expect has a $regex that does not compile"],
    ];
    for (const [steps, message] of cases) {
      const { code, lines, stderr } = await run([planFile(steps), "--backend", "local"]);
      expect({ code, lines, stderr }).toMatchObject({ code: 2, lines: [], stderr: expect.stringContaining(message) });
    }
    expect(existsSync(marker)).toBe(false);
  });

  it("exits 2 on usage and plan errors, naming the problem", async () => {
    expect(await run([])).toMatchObject({ code: 2, stderr: expect.stringContaining("missing PLAN.json") });
    expect(await run(["x.json", "--fast"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("unknown option --fast"),
    });
    expect(await run([join(dir, "missing.json")])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("ENOENT"),
    });
    const broken = join(dir, "broken.json");
    writeFileSync(broken, "[{");
    expect(await run([broken])).toMatchObject({ code: 2, stderr: expect.stringContaining("not valid JSON") });
    expect(await run([planFile([{ tool: "terminal", args: "echo" }])])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('step 1.args must be an object, got "echo"'),
    });
    expect(await run([planFile({ steps: [] }), "--backend", "ssh"])).toMatchObject({
      code: 2,
      stderr:
        'shellwright run: the ssh backend needs "host": put it in the plan\'s "environment", or in a JSON config file and pass -c FILE.json, e.g. {"host": "example.com"}\n',
    });
    expect(await run([planFile({ steps: [] }), "--backend", "mars"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('Unknown backend "mars"'),
    });
  });
});

describe("plans", () => {
  it("match part of a result, with matchers", () => {
    const result = { output: "hello world\n", exit_code: 0, nested: { a: 1, b: 2 } };
    expect(matchExpected({ exit_code: 0, nested: { a: 1 } }, result)).toEqual([]);
    expect(matchExpected({ output: { $regex: "^hello" }, error: { $absent: true } }, result)).toEqual([]);
    expect(matchExpected({ exit_code: 1, missing: { $absent: false } }, result)).toEqual([
      "result.exit_code: expected 1, got 0",
      "result.missing: expected a value, got undefined",
    ]);
  });

  it("match a $regex in linear time: (a+)+$ on 48 a's and a b answers at once; a lookahead is named", () => {
    const result = { output: `${"a".repeat(48)}b` };
    expect(matchExpected({ output: { $regex: "(a+)+$" } }, result)).toEqual([
      `result.output: expected to match /(a+)+$/, got ${JSON.stringify(result.output)}`,
    ]);
    expect(matchExpected({ output: { $regex: "(?=a)a" } }, result)[0]).toMatch(
      /^result\.output: \$regex "\(\?=a\)a" cannot be used: .*no lookahead/,
    );
  });

  it("reject unknown step keys", () => {
    expect(() => parsePlan([{ tool: "terminal", arg: {} }])).toThrow('step 1 has an unknown key "arg"');
    expect(() => parsePlan({ stepz: [] })).toThrow(/must be an array of steps/);
  });
});
