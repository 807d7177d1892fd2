/**
 * `shellwright mcp` with the real Shellwright tools, driven by the MCP SDK's
 * client over stdio: every tool listed, the matrix plan played, a long
 * terminal command cancelled, its progress seen.
 */

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolDefinitions } from "../../src/agents/definitions.js";
import { matchExpected, parsePlan, type PlanStep } from "../../src/cli/plan.js";
import { TOOLS } from "../../src/tools/registry.js";
import { alive, eventually } from "../helpers/processes.js";
import { call, connect, fixture } from "./helpers.js";

const example = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../examples/${name}`, import.meta.url), "utf8"));

/** examples/matrix.json; file-tool steps it still skips come from examples/matrix-files.json (until the two are one). */
function matrixSteps(): PlanStep[] {
  const steps = parsePlan(example("matrix.json")).steps;
  if (steps.every((step) => step.skip === undefined)) return steps;
  const fileSteps = parsePlan(example("matrix-files.json")).steps;
  return steps.map((step) => {
    if (step.skip === undefined) return step;
    const number = String(step.name).split(" ")[0];
    const replacement = fileSteps.find((candidate) => String(candidate.name).split(" ")[0] === number);
    if (replacement === undefined) throw new Error(`no file-tool step for skipped matrix step ${step.name}`);
    return replacement;
  });
}

describe("shellwright mcp (the CLI entry, real tools)", () => {
  let client: Client;
  let scratch: string;

  beforeAll(async () => {
    ({ client } = await connect("run-mcp-cli.mjs", ["--backend", "local"]));
    scratch = mkdtempSync(join(tmpdir(), "shellwright-mcp-cli-"));
  });
  afterAll(async () => {
    await client.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("lists every Shellwright tool with the schema the other doors show", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["terminal", "process", "read_file", "write_file", "patch", "search_files", "execute_code"]);
    expect(tools.map((tool) => tool.name)).toEqual(TOOLS.map((tool) => tool.name));
    const expected = toolDefinitions({ format: "anthropic" });
    for (const tool of tools) {
      const definition = expected.find((candidate) => candidate.name === tool.name)!;
      expect(tool.description).toBe(definition.description);
      expect(tool.inputSchema).toEqual(definition.input_schema);
    }
    expect(client.getServerVersion()).toMatchObject({ name: "shellwright" });
    expect(client.getInstructions()).toMatch(/persistent bash session/);
  });

  it("plays the matrix plan's steps, each result as the plan expects", async () => {
    // In a scratch dir, not /tmp/shellwright-matrix: the matrix tests may be using that one right now.
    const here = (value: unknown): Record<string, unknown> =>
      JSON.parse(JSON.stringify(value).replaceAll("/tmp/shellwright-matrix", `${scratch}/matrix`)) as Record<string, unknown>;
    const steps = matrixSteps();
    expect(steps.map((step) => step.tool)).toEqual([
      "terminal", "terminal", "terminal", "terminal", "write_file", "read_file", "search_files", "patch", "read_file", "terminal", "terminal", "terminal",
    ]);
    execFileSync("mkdir", ["-p", `${scratch}/matrix`]);
    for (const step of steps) {
      const result = await call(client, step.tool, here(step.args));
      const problems = step.expect === undefined ? [] : matchExpected(here(step.expect), result.structuredContent);
      expect({ step: step.name, problems, isError: result.isError }).toEqual({ step: step.name, problems: [], isError: false });
    }
    // Step 12 removed the session's cwd; a per-call workdir lets the next command move it.
    const back = await call(client, "terminal", { command: `cd ${scratch}`, workdir: "/" });
    expect(back.structuredContent).toMatchObject({ exit_code: 0 });
  });

  it("streams a long terminal command as progress", async () => {
    const updates: Progress[] = [];
    const result = (await client.callTool(
      { name: "terminal", arguments: { command: "for i in 1 2 3 4 5; do echo tick $i; sleep 0.3; done" } },
      undefined,
      { onprogress: (progress) => updates.push(progress) },
    )) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ output: "tick 1\ntick 2\ntick 3\ntick 4\ntick 5\n", exit_code: 0 });
    expect(updates.length).toBeGreaterThan(0);
    for (const update of updates) expect(update.message).toMatch(/^tick [1-5]$/);
  });

  it("cancels a long terminal command: the process ends and the session goes on", async () => {
    const pidFile = join(scratch, "terminal.pid");
    const controller = new AbortController();
    const outcome = await client
      .callTool({ name: "terminal", arguments: { command: `export BEFORE_CANCEL=1; bash -c 'echo $$ > ${pidFile}; echo started; exec sleep 300'` } }, undefined, {
        signal: controller.signal,
        onprogress: (progress) => progress.message === "started" && controller.abort("cancelled by the test"),
      })
      .catch((error: unknown) => error);
    expect(String(outcome)).toMatch(/cancelled by the test/);
    const pid = Number(readFileSync(pidFile, "utf8"));
    await eventually(() => !alive(pid), `the cancelled terminal command (pid ${pid}) to end`);
    const after = await call(client, "terminal", { command: "echo alive" });
    expect(after.structuredContent).toMatchObject({ output: "alive\n", exit_code: 0 });
  });

  it("refuses an unknown backend with a usage error that names it", () => {
    let failure: { status: number; stderr: string } | undefined;
    try {
      execFileSync(process.execPath, [fixture("run-mcp-cli.mjs"), "--backend", "cloud9"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    } catch (error) {
      failure = error as { status: number; stderr: string };
    }
    expect(failure?.status).toBe(2);
    expect(failure?.stderr).toMatch(/unknown backend "cloud9"; available: local/);
  });

  it("serves HTTP with --http, the token from the environment, until SIGTERM", async () => {
    const token = "t".repeat(20) + Date.now();
    const child = spawn(process.execPath, [fixture("run-mcp-cli.mjs"), "--http", "--port", "0"], {
      env: { ...process.env, SHELLWRIGHT_MCP_TOKEN: token },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    let stderr = "";
    child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
    await eventually(() => /MCP server on (\S+)/.test(stderr), "the server to say its address");
    const url = /MCP server on (\S+)/.exec(stderr)![1]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    const http = new Client({ name: "cli-http", version: "0" });
    await http.connect(transport);
    expect((await http.listTools()).tools.map((tool) => tool.name)).toContain("terminal");
    expect((await call(http, "terminal", { command: "echo over http" })).structuredContent).toMatchObject({ output: "over http\n" });
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    await http.close();
  });

  it("takes --token-file only when the file is private (mode 600), as serve does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shellwright-mcp-token-"));
    try {
      const token = `file-token-${Date.now()}-0123456789`;
      const file = join(dir, "token");
      writeFileSync(file, `${token}\n`, { mode: 0o640 });
      let failure: { status: number; stderr: string } | undefined;
      try {
        execFileSync(process.execPath, [fixture("run-mcp-cli.mjs"), "--http", "--port", "0", "--token-file", file], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
      } catch (error) {
        failure = error as { status: number; stderr: string };
      }
      expect(failure?.status).toBe(2);
      expect(failure?.stderr).toContain(`The token file ${file} is open to other users (mode 640)`);
      expect(failure?.stderr).toContain(`chmod 600 ${file}`);
      expect(failure?.stderr).not.toContain(token);

      writeFileSync(join(dir, "private"), `${token}\n`, { mode: 0o600 });
      const child = spawn(process.execPath, [fixture("run-mcp-cli.mjs"), "--http", "--port", "0", "--token-file", join(dir, "private")], { stdio: ["ignore", "ignore", "pipe"] });
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      let stderr = "";
      child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
      await eventually(() => /MCP server on (\S+)/.test(stderr) || child.exitCode !== null, "the server to say its address");
      expect(stderr).toMatch(/MCP server on http:\/\/127\.0\.0\.1:\d+\/mcp\n/);
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses --http without a token, and HTTP flags without --http", () => {
    const run = (args: string[]): { status: number; stderr: string } => {
      try {
        execFileSync(process.execPath, [fixture("run-mcp-cli.mjs"), ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, SHELLWRIGHT_MCP_TOKEN: "" } });
        return { status: 0, stderr: "" };
      } catch (error) {
        return error as { status: number; stderr: string };
      }
    };
    expect(run(["--http"])).toMatchObject({ status: 2, stderr: expect.stringMatching(/token is required/) });
    expect(run(["--port", "9000"])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--port needs --http/) });
  });
});
