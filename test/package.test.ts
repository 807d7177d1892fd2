/**
 * The package as a user gets it: `npm pack`, installed into an empty project
 * (dependencies from npm's cache where it has them), then the CLI, an ESM
 * import, a CommonJS require and a TypeScript build against the shipped
 * types, and `shellwright mcp` as an MCP client starts it. Also what a
 * missing optional peer (`ai`, `@openai/agents`, `deepagents`, `modal`) says. Runs on the Node that runs the
 * tests (package.json's engines: >=20.19, the first 20.x that can require ES
 * modules).
 */

import { execFile } from "node:child_process";
import { copyFile, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLS } from "../src/tools/registry.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const TYPES_NODE = (await import("../node_modules/@types/node/package.json", { with: { type: "json" } })).default
  .version;

let project: string;
/** dist/index.js's inode before and after packing: a rebuild (rm -rf dist, then tsc) makes a new file. */
let distBefore: number;
let distAfter: number;

async function inProject(command: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  const pending = run(command, args, { cwd: project, timeout: 120_000, env: { ...process.env, NODE_OPTIONS: "" } });
  // An open stdin pipe is input to `shellwright exec`, which would wait for its end.
  pending.child.stdin?.end();
  return pending;
}

/** Runs a Node script in the project and returns what it printed, or its error output when it failed. */
async function node(args: string[]): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout } = await inProject(process.execPath, args);
    return { ok: true, output: stdout };
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failure.stdout ?? ""}${failure.stderr ?? ""}` };
  }
}

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), "shellwright-package-"));
  // The test run has built dist/ already, and other test files use it while this one runs: packing must not
  // rebuild it. npm 10 runs `prepare` even under --ignore-scripts (npm/cli#7211), so the prepare script
  // builds nothing when SHELLWRIGHT_PACK_PREBUILT=1 (package.json).
  distBefore = (await stat(join(ROOT, "dist", "index.js"))).ino;
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", project], {
    cwd: ROOT,
    timeout: 120_000,
    env: { ...process.env, SHELLWRIGHT_PACK_PREBUILT: "1" },
  });
  distAfter = (await stat(join(ROOT, "dist", "index.js"))).ino;
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  await writeFile(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  await inProject("npm", [
    "install",
    "--prefer-offline",
    "--no-audit",
    "--no-fund",
    "--ignore-scripts",
    join(project, filename),
    `@types/node@${TYPES_NODE}`,
  ]);
}, 300_000);

afterAll(async () => {
  if (project !== undefined) await rm(project, { recursive: true, force: true });
});

// Timeouts are generous: npm and tsc are slow on a busy 2-core machine.
describe("the packed tarball", { timeout: 300_000 }, () => {
  it("was packed from the checkout's dist/ as built, not rebuilt (other test files use it meanwhile)", () => {
    expect(distAfter).toBe(distBefore);
  });

  it("ships the code, its types, the docs the CLI points at and the licence; no source maps", async () => {
    const installed = join(project, "node_modules", "shellwright");
    const top = await readdir(installed);
    expect(top).toEqual(expect.arrayContaining(["dist", "docs", "LICENSE", "README.md", "package.json"]));
    expect(await readdir(join(installed, "docs"))).toEqual(expect.arrayContaining(["agents.md", "gateway.md"]));
    const files = await readdir(join(installed, "dist"), { recursive: true });
    expect(files).toEqual(expect.arrayContaining(["index.js", "index.d.ts", "cli/main.js"]));
    expect(files.filter((file) => file.endsWith(".map"))).toEqual([]);
    expect(files.filter((file) => file.endsWith(".test.js"))).toEqual([]);
  });

  it("ships the README's plan examples: an installed user's first plan runs (run --example smoke)", async () => {
    const installed = join(project, "node_modules", "shellwright");
    expect(await readdir(join(installed, "examples"))).toEqual(expect.arrayContaining(["smoke.json", "matrix.json"]));
    const { stdout } = await inProject("npx", ["--no-install", "shellwright", "run", "--example", "smoke", "--check"]);
    const lines = stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { check?: string });
    expect(lines.map((line) => line.check)).toEqual(Array(7).fill("pass"));
    // The README's other spelling, the path inside the installed package.
    const byPath = await inProject("npx", [
      "--no-install",
      "shellwright",
      "run",
      "node_modules/shellwright/examples/smoke.json",
    ]);
    expect(byPath.stdout.trimEnd().split("\n")).toHaveLength(7);
  });

  it("runs the CLI through npx", async () => {
    const { stdout } = await inProject("npx", ["--no-install", "shellwright", "exec", "echo", "hi"]);
    expect(stdout).toBe("hi\n");
  });

  it("serves MCP over stdio through npx: the MCP SDK's client lists the 7 tools", async () => {
    const transport = new StdioClientTransport({
      command: "npx",
      args: ["--no-install", "shellwright", "mcp", "--backend", "local", "--cwd", project],
      cwd: project,
      env: { ...process.env, NODE_OPTIONS: "" } as Record<string, string>,
      stderr: "pipe",
    });
    const client = new Client({ name: "shellwright-package-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      // The installed package's server lists what this checkout's registry holds, in its order.
      expect(tools.map((tool) => tool.name)).toEqual(TOOLS.map((tool) => tool.name));
      expect(client.getServerVersion()).toMatchObject({ name: "shellwright" });
    } finally {
      await client.close();
    }
  });

  it("imports as ESM", async () => {
    const result = await node([
      "--input-type=module",
      "-e",
      `import { createEnvironment, toolDefinitions } from "shellwright";
       import { createMcpServer } from "shellwright/mcp";
       const env = await createEnvironment();
       const { output } = await env.execute("echo esm");
       await env.close();
       console.log(output.trim(), toolDefinitions({ format: "openai" }).length, typeof createMcpServer);`,
    ]);
    expect(result).toEqual({ ok: true, output: "esm 7 function\n" });
  });

  it("requires as CommonJS", async () => {
    const result = await node([
      "--input-type=commonjs",
      "-e",
      `const { createEnvironment, toolDefinitions } = require("shellwright");
       const { createMcpServer } = require("shellwright/mcp");
       createEnvironment().then(async (env) => {
         const { output } = await env.execute("echo cjs");
         await env.close();
         console.log(output.trim(), toolDefinitions({ format: "anthropic" }).length, typeof createMcpServer);
       });`,
    ]);
    expect(result).toEqual({ ok: true, output: "cjs 7 function\n" });
  });

  it("type-checks a TypeScript program against the shipped types (module nodenext)", async () => {
    await writeFile(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { module: "nodenext", target: "es2022", strict: true, noEmit: true, types: ["node"] },
        files: ["main.ts"],
      }),
    );
    await writeFile(
      join(project, "main.ts"),
      `import { createEnvironment, toolDefinitions, type ExecuteResult, type ToolDefinition } from "shellwright";
import type { ShellwrightMcpServer } from "shellwright/mcp";

const env = await createEnvironment({ backend: "local" });
const result: ExecuteResult = await env.execute("echo typed");
const code: number = result.exitCode;
const custom: readonly ToolDefinition[] = [];
const openai = toolDefinitions({ format: "openai", strict: true });
const name: string = openai[0]!.function.name;
const anthropic = toolDefinitions({ format: "anthropic", tools: custom });
const kind: "object" = anthropic[0]!.input_schema.type;
const responses = toolDefinitions({ format: "openai-responses" });
const strict: boolean = responses[0]!.strict;
const server: ShellwrightMcpServer | undefined = undefined;
console.log(code, name, kind, strict, server);
await env.close();
`,
    );
    const checked = await inProject(process.execPath, [TSC, "-p", "tsconfig.json"]).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(checked).toBe("");
  });

  it("says what to install when an optional peer is missing", async () => {
    const ai = await node(["--input-type=module", "-e", `import "shellwright/ai";`]);
    expect(ai.ok).toBe(false);
    expect(ai.output).toContain("shellwright/ai needs the AI SDK, which is not installed: run `npm install ai@7`");
    expect(ai.output).not.toContain("ERR_MODULE_NOT_FOUND");
    const agents = await node(["--input-type=module", "-e", `import "shellwright/openai-agents";`]);
    expect(agents.ok).toBe(false);
    expect(agents.output).toContain(
      "shellwright/openai-agents needs the OpenAI Agents SDK, which is not installed: run `npm install @openai/agents`",
    );
    expect(agents.output).not.toContain("ERR_MODULE_NOT_FOUND");
    const deep = await node(["--input-type=commonjs", "-e", `require("shellwright/deepagents");`]);
    expect(deep.ok).toBe(false);
    expect(deep.output).toContain(
      "shellwright/deepagents needs LangChain's deepagents, which is not installed: run `npm install deepagents@1`",
    );
    // The error shown is ours; Node's own stays only as its cause, for whoever debugs the install.
    expect(deep.output).toMatch(/^ShellwrightError: shellwright\/deepagents needs/m);
    expect(deep.output).not.toMatch(/^Error: Cannot find module/m);
    const modal = await node([
      "--input-type=module",
      "-e",
      `import { createEnvironment } from "shellwright";
       await createEnvironment({ backend: "modal" }).catch((error) => console.log(error.message));`,
    ]);
    expect(modal.output).toMatch(
      /^The modal backend needs Modal's JavaScript SDK, which is not installed: run `npm install modal@~0\.11`/,
    );
  });
});

describe("the prepare script", () => {
  // npm 10 runs it even under `npm pack --ignore-scripts` (npm/cli#7211). Run in a scratch dir holding only
  // package.json: there a build could only fail (no sources, no tsc), so success means it built nothing.
  it("builds nothing when SHELLWRIGHT_PACK_PREBUILT=1", async () => {
    const scratch = await mkdtemp(join(tmpdir(), "shellwright-prepare-"));
    try {
      await copyFile(join(ROOT, "package.json"), join(scratch, "package.json"));
      const result = await run("npm", ["run", "prepare"], {
        cwd: scratch,
        timeout: 60_000,
        env: { ...process.env, SHELLWRIGHT_PACK_PREBUILT: "1" },
      }).then(
        () => "ok",
        (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}${error.stderr ?? ""}`,
      );
      expect(result).toBe("ok");
      expect(await readdir(scratch)).toEqual(["package.json"]);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
