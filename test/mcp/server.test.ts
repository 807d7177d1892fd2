/**
 * The MCP server's logic, in-process: the MCP SDK's own client talks to
 * createMcpServer over the SDK's in-memory transport, and the tools run in a
 * real local session. No child process, so a failure points at the server and
 * not at a transport; the real `shellwright mcp` process on stdio has its own
 * few tests in cli.test.ts.
 */

import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type JSONRPCMessage,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolDefinitions } from "../../src/agents/definitions.js";
import { TOOLS } from "../../src/tools/registry.js";
import { UNIFIED_EXEC_TOOLS } from "../../src/tools/unified-exec/unified-exec.js";
import { matchExpected, parsePlan, type PlanStep } from "../../src/cli/plan.js";
import { createEnvironment, InvalidOptionError, type Environment } from "../../src/index.js";
import { createMcpServer, type McpServerOptions, type ShellwrightMcpServer } from "../../src/mcp/server.js";
import { testTools } from "../fixtures/agent-tools.mjs";
import { alive, eventually } from "../helpers/processes.js";
import { call, textOf } from "./helpers.js";
import { TOOL_NAMES } from "../helpers/tools.js";
import { useScratchDir } from "../helpers/scratch.js";

/** A server and a connected client, linked in memory; `sent` is every message the server sent. */
async function connect(
  options: McpServerOptions,
): Promise<{ client: Client; mcp: ShellwrightMcpServer; sent: JSONRPCMessage[] }> {
  const mcp = createMcpServer(options);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const sent: JSONRPCMessage[] = [];
  const send = serverTransport.send.bind(serverTransport);
  serverTransport.send = (message, sendOptions) => {
    sent.push(message);
    return send(message, sendOptions);
  };
  await mcp.connect(serverTransport);
  const client = new Client({ name: "shellwright-test", version: "0.0.0" });
  await client.connect(clientTransport);
  return { client, mcp, sent };
}

/** Every session recordSessions opened, closed after the tests in case a failing test left one open. */
const recorded: Environment[] = [];
afterAll(async () => {
  await Promise.all(recorded.map((session) => session.close()));
});

/** Opens real local sessions and keeps them, so a test can see when the server opened one and whether it closed it. */
function recordSessions(): { opened: Environment[]; createSession: () => Promise<Environment> } {
  const opened: Environment[] = [];
  return {
    opened,
    createSession: async () => {
      const session = await createEnvironment();
      opened.push(session);
      recorded.push(session);
      return session;
    },
  };
}

/** Waits for the server to have closed after its client went away; a server that never notices fails here, not at the test's timeout. */
async function serverClosed(mcp: ShellwrightMcpServer): Promise<void> {
  let closed = false;
  void mcp.closed.then(() => (closed = true));
  await eventually(() => closed, "the server to see the connection end and close its session");
}

/** Starts a command that writes its pid and then sleeps, and resolves with the pid once it has printed "started". */
function startSleeper(
  client: Client,
  tool: string,
  pidFile: string,
  signal: AbortSignal,
): { started: Promise<number>; settled: Promise<unknown> } {
  let resolveStarted!: () => void;
  const started = new Promise<void>((resolve) => (resolveStarted = resolve));
  const settled = client
    .callTool(
      { name: tool, arguments: { command: `bash -c 'echo $$ > ${pidFile}; echo started; exec sleep 300'` } },
      undefined,
      {
        signal,
        onprogress: (progress) => progress.message === "started" && resolveStarted(),
      },
    )
    .catch((error: unknown) => error);
  return { started: started.then(() => Number(readFileSync(pidFile, "utf8"))), settled };
}

/** Calls a tool with a progress handler: its result and the progress notifications that came before it. */
async function callWithProgress(
  client: Client,
  request: { name: string; arguments: Record<string, unknown> },
): Promise<{ result: CallToolResult; updates: Progress[] }> {
  const updates: Progress[] = [];
  const result = (await client.callTool(request, undefined, {
    onprogress: (progress) => updates.push(progress),
  })) as CallToolResult;
  return { result, updates };
}

describe("MCP server with the test tools", () => {
  let client: Client;
  let mcp: ShellwrightMcpServer;
  let sent: JSONRPCMessage[];
  const scratch = useScratchDir("shellwright-mcp-server-");

  beforeAll(async () => {
    ({ client, mcp, sent } = await connect({
      tools: testTools,
      progressIntervalMs: 50,
      createSession: () => createEnvironment(),
    }));
  });
  afterAll(async () => {
    await mcp.close();
  });

  it("lists every tool with its input schema, without the JSON Schema dialect", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["run", "repeat", "broken"]);
    const run = tools.find((tool) => tool.name === "run")!;
    expect(run.description).toMatch(/bash command/);
    expect(run.inputSchema).toMatchObject({
      type: "object",
      required: ["command"],
      properties: { command: { type: "string" } },
    });
    expect(run.inputSchema).not.toHaveProperty("$schema");
  });

  it("runs calls in one session: cwd and exported variables carry over", async () => {
    const first = await call(client, "run", { command: `cd ${scratch.path} && export MCP_TEST_VAR=kept` });
    expect(first.isError).toBe(false);
    const second = await call(client, "run", { command: "echo $MCP_TEST_VAR; pwd" });
    expect(second.isError).toBe(false);
    expect(second.structuredContent).toMatchObject({
      output: `kept\n${scratch.path}\n`,
      exit_code: 0,
      cwd: scratch.path,
    });
    expect(JSON.parse(textOf(second))).toEqual(second.structuredContent);
  });

  it("reports a non-zero exit as a normal result", async () => {
    const result = await call(client, "run", { command: "echo nope >&2; exit 3" });
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toMatchObject({ output: "nope\n", exit_code: 3 });
  });

  it("returns a tool failure and bad arguments as results with isError", async () => {
    const broken = await call(client, "broken", {});
    expect(broken.isError).toBe(true);
    expect(broken.structuredContent).toEqual({ error: "broken failed: the disk is on fire" });

    const invalid = await call(client, "repeat", { text: "a", times: 9 });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(
      /^\{"error":"Invalid arguments for repeat: times .*; fix it and call repeat again\."\}$/,
    );

    const defaulted = await call(client, "repeat", { text: "ab" });
    expect(defaulted.structuredContent).toEqual({ text: "abab" });
  });

  it("answers a call to a tool that does not exist with a protocol error", async () => {
    const error = await client.callTool({ name: "no_such_tool", arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((error as McpError).message).toMatch(/Unknown tool "no_such_tool". Available tools: run, repeat, broken\./);
  });

  it("sends progress notifications while a long command prints, growing, each with the latest line", async () => {
    const { result, updates } = await callWithProgress(client, {
      name: "run",
      arguments: { command: "for i in 1 2 3 4 5 6; do echo step $i; sleep 0.2; done" },
    });
    expect(result.structuredContent).toMatchObject({
      exit_code: 0,
      output: "step 1\nstep 2\nstep 3\nstep 4\nstep 5\nstep 6\n",
    });
    expect(updates.length).toBeGreaterThan(0);
    for (const [index, update] of updates.entries()) {
      expect(update.message).toMatch(/^step [1-6]$/);
      if (index > 0) expect(update.progress).toBeGreaterThan(updates[index - 1]!.progress);
    }
    expect(updates.at(-1)!.progress).toBeLessThanOrEqual("step 1\n".length * 6);
  });

  it("sends no progress notification to a call without a progress token", async () => {
    const before = sent.length;
    // Without onprogress the SDK's client sends no progress token.
    const result = await call(client, "run", { command: "for i in 1 2 3; do echo quiet $i; sleep 0.1; done" });
    expect(result.structuredContent).toMatchObject({ output: "quiet 1\nquiet 2\nquiet 3\n", exit_code: 0 });
    const methods = sent.slice(before).map((message) => ("method" in message ? message.method : "response"));
    expect(methods).toEqual(["response"]);
  });

  it("interrupts the command when the client cancels, and the session stays usable", async () => {
    const controller = new AbortController();
    const { started, settled } = startSleeper(client, "run", join(scratch.path, "cancel.pid"), controller.signal);
    const pid = await started;
    controller.abort("user pressed stop");
    expect(String(await settled)).toMatch(/user pressed stop/);
    await eventually(() => !alive(pid), `the cancelled command (pid ${pid}) to end`);

    const after = await call(client, "run", { command: "echo still here" });
    expect(after.structuredContent).toMatchObject({ output: "still here\n", exit_code: 0 });
  });
});

describe("MCP server: the session's lifetime", () => {
  const scratch = useScratchDir("shellwright-mcp-lifetime-");
  beforeAll(() => {});
  afterAll(() => {});

  it("opens no session to list tools, opens one at the first call, and reuses it after", async () => {
    const sessions = recordSessions();
    const { client, mcp } = await connect({ tools: testTools, createSession: sessions.createSession });
    try {
      await client.listTools();
      expect(sessions.opened).toHaveLength(0);
      expect((await call(client, "run", { command: "export OPENED_ONCE=yes" })).isError).toBe(false);
      expect(sessions.opened).toHaveLength(1);
      expect((await call(client, "run", { command: "echo $OPENED_ONCE" })).structuredContent).toMatchObject({
        output: "yes\n",
      });
      expect((await call(client, "repeat", { text: "x" })).structuredContent).toEqual({ text: "xx" });
      expect(sessions.opened).toHaveLength(1);
    } finally {
      await mcp.close();
    }
  });

  it("opens the session once for calls that arrive together", async () => {
    const sessions = recordSessions();
    const { client, mcp } = await connect({ tools: testTools, createSession: sessions.createSession });
    try {
      const results = await Promise.all([1, 2, 3].map((n) => call(client, "run", { command: `echo call ${n}` })));
      expect(results.map((result) => result.structuredContent)).toMatchObject([
        { output: "call 1\n" },
        { output: "call 2\n" },
        { output: "call 3\n" },
      ]);
      expect(sessions.opened).toHaveLength(1);
    } finally {
      await mcp.close();
    }
  });

  it("answers with an isError result when the session cannot open, and tries again at the next call", async () => {
    let attempts = 0;
    const createSession = async (): Promise<Environment> => {
      attempts += 1;
      if (attempts === 1) throw new Error("the backend is still booting");
      return createEnvironment();
    };
    const { client, mcp } = await connect({ tools: testTools, createSession });
    try {
      const failed = await call(client, "run", { command: "echo first" });
      expect(failed.isError).toBe(true);
      expect(failed.structuredContent).toEqual({
        error: "The shell session could not be opened: the backend is still booting",
      });
      const retried = await call(client, "run", { command: "echo second" });
      expect(retried.isError).toBe(false);
      expect(retried.structuredContent).toMatchObject({ output: "second\n", exit_code: 0 });
      expect(attempts).toBe(2);
    } finally {
      await mcp.close();
    }
  });

  it("closes the session and ends its running command when the client disconnects", async () => {
    const sessions = recordSessions();
    const { client, mcp } = await connect({
      tools: testTools,
      progressIntervalMs: 50,
      createSession: sessions.createSession,
    });
    const controller = new AbortController();
    const { started, settled } = startSleeper(client, "run", join(scratch.path, "disconnect.pid"), controller.signal);
    const pid = await started;
    expect(alive(pid)).toBe(true);
    await client.close();
    await serverClosed(mcp);
    expect(sessions.opened).toHaveLength(1);
    expect(sessions.opened[0]!.closed).toBe(true);
    await eventually(() => !alive(pid), `the running command (pid ${pid}) to end with the connection`);
    expect(String(await settled)).toMatch(/Connection closed/);
  });

  it("close() ends the connection and closes the session", async () => {
    const sessions = recordSessions();
    const { client, mcp } = await connect({ tools: testTools, createSession: sessions.createSession });
    const clientClosed = new Promise<void>((resolve) => (client.onclose = resolve));
    await call(client, "run", { command: "true" });
    await mcp.close();
    await mcp.closed;
    await clientClosed;
    expect(sessions.opened[0]!.closed).toBe(true);
    await expect(client.listTools()).rejects.toThrow(/Not connected/);
  });

  it("closes cleanly without opening a session when no tool was called", async () => {
    const sessions = recordSessions();
    const { client, mcp } = await connect({ tools: testTools, createSession: sessions.createSession });
    await client.listTools();
    await client.close();
    await serverClosed(mcp);
    expect(sessions.opened).toHaveLength(0);
  });

  it("closes a session that was still opening when the connection ended", async () => {
    const sessions = recordSessions();
    let letOpen!: () => void;
    const gate = new Promise<void>((resolve) => (letOpen = resolve));
    let asked = false;
    const { client, mcp } = await connect({
      tools: testTools,
      createSession: async () => {
        asked = true;
        await gate;
        return sessions.createSession();
      },
    });
    const pending = call(client, "run", { command: "echo never" }).catch((error: unknown) => error);
    await eventually(() => asked, "the call to be waiting for its session");
    await client.close();
    letOpen();
    await serverClosed(mcp);
    expect(sessions.opened).toHaveLength(1);
    expect(sessions.opened[0]!.closed).toBe(true);
    expect(String(await pending)).toMatch(/Connection closed/);
  });
});

describe("MCP server: who it says it is", () => {
  it("names itself shellwright with the package's version, and gives the default instructions", async () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    const { client, mcp } = await connect({ tools: testTools, createSession: () => createEnvironment() });
    try {
      expect(client.getServerVersion()).toEqual({ name: "shellwright", version: pkg.version });
      expect(client.getInstructions()).toMatch(/persistent bash session/);
      expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: false } });
    } finally {
      await mcp.close();
    }
  });

  it("gives the caller's instructions instead of the default ones", async () => {
    const { client, mcp } = await connect({
      tools: testTools,
      instructions: "Only read files here.",
      createSession: () => createEnvironment(),
    });
    try {
      expect(client.getInstructions()).toBe("Only read files here.");
    } finally {
      await mcp.close();
    }
  });
});

describe("createMcpServer options", () => {
  const createSession = () => createEnvironment();

  it("refuses an unknown option, a createSession that is not a function and a bad progress interval, naming the option", () => {
    expect(() => createMcpServer({ createSession, port: 80 } as McpServerOptions)).toThrow(
      new InvalidOptionError(
        "port",
        'Unknown createMcpServer option "port"; known options: createSession, tools, instructions, progressIntervalMs, settings',
      ),
    );
    expect(() => createMcpServer({ createSession: "local" } as unknown as McpServerOptions)).toThrow(
      new InvalidOptionError("createSession", 'createSession must be a function that opens a Session, got "local"'),
    );
    expect(() => createMcpServer({ createSession, progressIntervalMs: 0 })).toThrow(
      new InvalidOptionError(
        "progressIntervalMs",
        "progressIntervalMs must be a positive number of milliseconds, got 0",
      ),
    );
  });
});

const example = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../examples/${name}`, import.meta.url), "utf8"));

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

describe("MCP server with the Shellwright tools", () => {
  let client: Client;
  let mcp: ShellwrightMcpServer;
  const scratch = useScratchDir("shellwright-mcp-tools-");

  beforeAll(async () => {
    ({ client, mcp } = await connect({ createSession: () => createEnvironment({ backend: "local" }) }));
  });
  afterAll(async () => {
    await mcp.close();
  });

  it("lists every Shellwright tool with the schema the other doors show", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(TOOL_NAMES);
    const expected = toolDefinitions({ format: "anthropic" });
    for (const tool of tools) {
      const definition = expected.find((candidate) => candidate.name === tool.name)!;
      expect(tool.description).toBe(definition.description);
      expect(tool.inputSchema).toEqual(definition.input_schema);
    }
  });

  it("plays the matrix plan's steps, each result as the plan expects", async () => {
    // In a scratch dir, not /tmp/shellwright-matrix: the matrix tests may be using that one right now.
    const here = (value: unknown): Record<string, unknown> =>
      JSON.parse(JSON.stringify(value).replaceAll("/tmp/shellwright-matrix", `${scratch.path}/matrix`)) as Record<
        string,
        unknown
      >;
    const steps = matrixSteps();
    expect(steps.map((step) => step.tool)).toEqual([
      "terminal",
      "terminal",
      "terminal",
      "terminal",
      "write_file",
      "read_file",
      "search_files",
      "patch",
      "read_file",
      "terminal",
      "terminal",
      "terminal",
    ]);
    mkdirSync(`${scratch.path}/matrix`, { recursive: true });
    for (const step of steps) {
      const result = await call(client, step.tool, here(step.args));
      const problems = step.expect === undefined ? [] : matchExpected(here(step.expect), result.structuredContent);
      expect({ step: step.name, problems, isError: result.isError }).toEqual({
        step: step.name,
        problems: [],
        isError: false,
      });
    }
    // Step 12 removed the session's cwd; a per-call workdir lets the next command move it.
    const back = await call(client, "terminal", { command: `cd ${scratch.path}`, workdir: "/" });
    expect(back.structuredContent).toMatchObject({ exit_code: 0 });
  });

  it("streams a long terminal command as progress", async () => {
    const { result, updates } = await callWithProgress(client, {
      name: "terminal",
      arguments: { command: "for i in 1 2 3 4 5; do echo tick $i; sleep 0.3; done" },
    });
    expect(result.structuredContent).toMatchObject({
      output: "tick 1\ntick 2\ntick 3\ntick 4\ntick 5\n",
      exit_code: 0,
    });
    expect(updates.length).toBeGreaterThan(0);
    for (const update of updates) expect(update.message).toMatch(/^tick [1-5]$/);
  });

  it("cancels a long terminal command: the process ends and the session goes on", async () => {
    const pidFile = join(scratch.path, "terminal.pid");
    const controller = new AbortController();
    const outcome = await client
      .callTool(
        {
          name: "terminal",
          arguments: {
            command: `export BEFORE_CANCEL=1; bash -c 'echo $$ > ${pidFile}; echo started; exec sleep 300'`,
          },
        },
        undefined,
        {
          signal: controller.signal,
          onprogress: (progress) => progress.message === "started" && controller.abort("cancelled by the test"),
        },
      )
      .catch((error: unknown) => error);
    expect(String(outcome)).toMatch(/cancelled by the test/);
    const pid = Number(readFileSync(pidFile, "utf8"));
    await eventually(() => !alive(pid), `the cancelled terminal command (pid ${pid}) to end`);
    const after = await call(client, "terminal", { command: "echo alive" });
    expect(after.structuredContent).toMatchObject({ output: "alive\n", exit_code: 0 });
  });
});

describe("createMcpServer with the optional exec_command / write_stdin pair", () => {
  it("serves them next to the Shellwright tools: a REPL started and typed into over MCP", async () => {
    const { client, mcp } = await connect({
      tools: [...TOOLS, ...UNIFIED_EXEC_TOOLS],
      createSession: () => createEnvironment(),
    });
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual([...TOOL_NAMES, "exec_command", "write_stdin"]);
      const started = await call(client, "exec_command", { cmd: "python3 -q", tty: true, yield_time_ms: 500 });
      expect(started.isError).toBe(false);
      const id = (started.structuredContent as { session_id: string }).session_id;
      let seen = "";
      for (let i = 0; i < 40 && !seen.includes("42"); i++) {
        const reply = await call(client, "write_stdin", {
          session_id: id,
          chars: i === 0 ? "6*7\r" : "",
          yield_time_ms: 500,
        });
        seen += (reply.structuredContent as { output: string }).output;
      }
      expect(seen).toMatch(/^42$/m);
      const ended = await call(client, "write_stdin", { session_id: id, chars: "\u0004", yield_time_ms: 3000 });
      expect(ended.structuredContent).toMatchObject({ exit_code: 0 });
    } finally {
      await mcp.close();
    }
  });
});
