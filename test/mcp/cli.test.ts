/**
 * `shellwright mcp` as a real process, driven by the MCP SDK's client over
 * stdio: the path a user's MCP client takes (argument parsing, the stdio
 * transport, the process's lifetime). The server's logic is tested in-process
 * in server.test.ts.
 */

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alive, eventually } from "../helpers/processes.js";
import { HELPER_PID } from "../helpers/fast-path-pids.js";
import { noLocalHelper, noStaticHelper, skipUnless } from "../helpers/native-helper.js";
import { childrenNamed } from "../helpers/proc-scan.js";
import { answersOn, call, connect, fixture, useLocalMcpCli, usageFailure, writeLongLine } from "./helpers.js";
import { TOOL_NAMES } from "../helpers/tools.js";

/**
 * `shellwright mcp` spawned with plain pipes, so the test alone decides how the
 * client goes away (the SDK's stdio client would also send SIGTERM on close).
 * The SDK's stdio "server" transport is only a JSON-RPC reader on one stream
 * and writer on another, so it serves here as the client's end of the pipes.
 */
async function spawnServer(args: string[]): Promise<{ client: Client; child: ChildProcess }> {
  const child = spawn(process.execPath, [fixture("run-mcp-cli.mjs"), ...args], { stdio: ["pipe", "pipe", "ignore"] });
  const client = new Client({ name: "shellwright-test", version: "0.0.0" });
  await client.connect(new StdioServerTransport(child.stdout!, child.stdin!));
  return { client, child };
}

/** `shellwright mcp --http` with the token in its environment, once it has said its address. */
async function startHttpServer(
  args: string[],
  token: string,
): Promise<{ child: ChildProcess; exited: Promise<number | null>; url: string }> {
  const child = spawn(process.execPath, [fixture("run-mcp-cli.mjs"), "--http", "--port", "0", ...args], {
    env: { ...process.env, SHELLWRIGHT_MCP_TOKEN: token },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  let stderr = "";
  child.stderr!.on("data", (data: Buffer) => (stderr += data.toString()));
  await eventually(() => /MCP server on (\S+)/.test(stderr), "the server to say its address");
  return { child, exited, url: /MCP server on (\S+)/.exec(stderr)![1]! };
}

/** Runs `body` against a server of its own, and ends that server after it, whatever happened. */
async function withServer(
  args: string[],
  body: (server: { client: Client; child: ChildProcess }) => Promise<void>,
): Promise<void> {
  const server = await spawnServer(args);
  try {
    await body(server);
  } finally {
    await server.client.close();
    if (server.child.exitCode === null) server.child.kill("SIGKILL");
  }
}

describe("shellwright mcp (a real process)", () => {
  const cli = useLocalMcpCli("shellwright-mcp-cli-");

  it("lists the Shellwright tools and names itself", async () => {
    const { tools } = await cli.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(TOOL_NAMES);
    expect(cli.client.getServerVersion()).toMatchObject({ name: "shellwright" });
    expect(cli.client.getInstructions()).toMatch(/persistent bash session/);
  });

  it("runs a tool call in a local session in the given --cwd", async () => {
    const result = await call(cli.client, "terminal", { command: "echo over stdio; pwd" });
    expect(result.isError, JSON.stringify(result.content)).toBe(false);
    expect(result.structuredContent).toMatchObject({ output: `over stdio\n${cli.scratch}\n`, exit_code: 0 });
  });

  it("with --unified-exec, offers Codex's exec_command and write_stdin beside the tools, over the same session", async (context) => {
    skipUnless(context, noStaticHelper);
    const { client: codex } = await connect("run-mcp-cli.mjs", ["--unified-exec", "--cwd", cli.scratch]);
    try {
      const { tools } = await codex.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([...TOOL_NAMES, "exec_command", "write_stdin"]);
      await call(codex, "terminal", { command: "export FROM_TERMINAL=yes" });
      const started = await call(codex, "exec_command", { cmd: 'read -r line; echo "$FROM_TERMINAL:$line:$PWD"' });
      expect(started.isError, JSON.stringify(started.content)).toBe(false);
      const id = (started.structuredContent as { session_id?: string }).session_id;
      expect(id).toBeDefined();
      const answer = await call(codex, "write_stdin", { session_id: id, chars: "typed\n", yield_time_ms: 5000 });
      expect((answer.structuredContent as { output: string }).output).toContain(`yes:typed:${cli.scratch}`);
    } finally {
      await codex.close();
    }
  });

  it("exits when the client goes away, ending the session's running and background processes", async () => {
    const server = await spawnServer(["--backend", "local", "--cwd", cli.scratch]);
    const pids: number[] = [];
    try {
      const backgroundPidFile = join(cli.scratch, "background.pid");
      const background = await call(server.client, "terminal", {
        command: `bash -c 'echo $$ > ${backgroundPidFile}; exec sleep 300'`,
        background: true,
      });
      expect(background.isError).toBe(false);
      await eventually(
        () => existsSync(backgroundPidFile) && readFileSync(backgroundPidFile, "utf8").trim() !== "",
        "the background process to write its pid",
      );
      const backgroundPid = Number(readFileSync(backgroundPidFile, "utf8"));
      pids.push(backgroundPid);

      const runningPidFile = join(cli.scratch, "running.pid");
      const started = new Promise<void>((resolve) => {
        server.client
          .callTool(
            {
              name: "terminal",
              arguments: { command: `bash -c 'echo $$ > ${runningPidFile}; echo started; exec sleep 300'` },
            },
            undefined,
            {
              onprogress: (progress) => progress.message === "started" && resolve(),
            },
          )
          .catch(() => undefined);
      });
      await started;
      const runningPid = Number(readFileSync(runningPidFile, "utf8"));
      pids.push(runningPid);
      expect(alive(runningPid)).toBe(true);
      expect(alive(backgroundPid)).toBe(true);

      // The client goes away as a crashed editor does: its end of the pipe closes, no signal is sent.
      server.child.stdin!.end();
      await eventually(() => server.child.exitCode !== null, "the server process to exit");
      expect(server.child.exitCode).toBe(0);
      await eventually(() => !alive(runningPid), `the running command (pid ${runningPid}) to end with the server`);
      await eventually(
        () => !alive(backgroundPid),
        `the background process (pid ${backgroundPid}) to end with the server`,
      );
    } finally {
      // Only when the test failed is anything left to end.
      await server.client.close();
      if (server.child.exitCode === null) server.child.kill("SIGKILL");
      for (const pid of pids.filter(alive)) process.kill(pid, "SIGKILL");
    }
  });

  it("refuses an unknown backend with a usage error that names it", () => {
    const failure = usageFailure(["--backend", "cloud9"]);
    expect(failure?.status).toBe(2);
    expect(failure?.stderr).toMatch(/unknown backend "cloud9"; available: local/);
  });

  it("serves HTTP with --http, the token from the environment, until SIGTERM", async () => {
    const token = "t".repeat(20) + Date.now();
    const { child, exited, url } = await startHttpServer([], token);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const http = new Client({ name: "cli-http", version: "0" });
    await http.connect(transport);
    expect((await http.listTools()).tools.map((tool) => tool.name)).toContain("terminal");
    expect((await call(http, "terminal", { command: "echo over http" })).structuredContent).toMatchObject({
      output: "over http\n",
    });
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    await http.close();
  });

  it("stops cleanly on a SIGTERM sent the moment it announces its address", async () => {
    // The child stalls 300 ms right after printing the address (a loaded
    // machine's scheduling): the signal lands inside that window.
    const child = spawn(process.execPath, [fixture("run-mcp-cli.mjs"), "--http", "--port", "0"], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, SHELLWRIGHT_MCP_TOKEN: "s".repeat(32), SW_TEST_STALL_AFTER_ANNOUNCE_MS: "300" },
    });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on("exit", (code, signal) => resolve({ code, signal })),
    );
    let stderr = "";
    child.stderr.on("data", (data: Buffer) => {
      stderr += data.toString();
      if (stderr.includes("MCP server on")) child.kill("SIGTERM");
    });
    expect(await exited).toEqual({ code: 0, signal: null });
  });

  it("takes --token-file only when the file is private (mode 600), as serve does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "shellwright-mcp-token-"));
    try {
      const token = `file-token-${Date.now()}-0123456789`;
      const file = join(dir, "token");
      writeFileSync(file, `${token}\n`, { mode: 0o640 });
      let failure: { status: number; stderr: string } | undefined;
      try {
        execFileSync(process.execPath, [fixture("run-mcp-cli.mjs"), "--http", "--port", "0", "--token-file", file], {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
        });
      } catch (error) {
        failure = error as { status: number; stderr: string };
      }
      expect(failure?.status).toBe(2);
      expect(failure?.stderr).toContain(`The token file ${file} is open to other users (mode 640)`);
      expect(failure?.stderr).toContain(`chmod 600 ${file}`);
      expect(failure?.stderr).not.toContain(token);

      writeFileSync(join(dir, "private"), `${token}\n`, { mode: 0o600 });
      const child = spawn(
        process.execPath,
        [fixture("run-mcp-cli.mjs"), "--http", "--port", "0", "--token-file", join(dir, "private")],
        { stdio: ["ignore", "ignore", "pipe"] },
      );
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      let stderr = "";
      child.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
      await eventually(
        () => /MCP server on (\S+)/.test(stderr) || child.exitCode !== null,
        "the server to say its address",
      );
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
        execFileSync(process.execPath, [fixture("run-mcp-cli.mjs"), ...args], {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
          env: { ...process.env, SHELLWRIGHT_MCP_TOKEN: "" },
        });
        return { status: 0, stderr: "" };
      } catch (error) {
        return error as { status: number; stderr: string };
      }
    };
    // The flags' and the variable's words, not the library's (insecureNoAuth, token).
    expect(run(["--http"])).toMatchObject({
      status: 2,
      stderr:
        "shellwright: no token: set $SHELLWRIGHT_MCP_TOKEN or pass --token-file PATH (a file of mode 600), or --insecure-no-auth on a loopback --host\n",
    });
    expect(run(["--http", "--insecure-no-auth", "--host", "0.0.0.0"])).toMatchObject({
      status: 2,
      stderr:
        'shellwright: --insecure-no-auth is allowed only on a loopback --host (127.0.0.1, ::1, localhost), not "0.0.0.0"; set $SHELLWRIGHT_MCP_TOKEN or pass --token-file PATH\n',
    });
    expect(run(["--port", "9000"])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--port needs --http/) });
    expect(run(["--pool-size", "2"])).toMatchObject({
      status: 2,
      stderr: expect.stringMatching(/--pool-size needs --http/),
    });
    for (const [value, message] of [
      ["0", '--pool-size needs a whole number of at least 1, got "0"'],
      ["257", '--pool-size must be at most 256, got "257"'],
    ])
      expect(run(["--http", "--pool-size", value!])).toMatchObject({
        status: 2,
        stderr: expect.stringContaining(message!),
      });
  });

  it("with --http --pool-size, a client's session is one the server opened before the client connected", async (context) => {
    skipUnless(context, noLocalHelper);
    const token = "p".repeat(20) + Date.now();
    const { child, exited, url } = await startHttpServer(["--pool-size", "1"], token);
    // The warm member's fast-path helper runs before any client has connected.
    await eventually(() => childrenNamed(child.pid!, "swmux").length === 1, "the warm member's helper");
    const warm = childrenNamed(child.pid!, "swmux");
    const http = new Client({ name: "cli-pool", version: "0" });
    await http.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    const result = (await call(http, "terminal", { command: HELPER_PID })).structuredContent as { output: string };
    expect(Number(result.output)).toBe(warm[0]);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    await http.close();
  });
});

describe("shellwright mcp: a message over the limit (a real process on pipes)", () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "shellwright-mcp-limit-"));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  /** The peak resident memory of a process so far, in bytes. */
  const peakRss = (pid: number): number =>
    Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;

  it("answers a 12 MB write_file with an error naming the limit and the flag, and serves the next call", async () => {
    await withServer(["--backend", "local", "--cwd", scratch], async (server) => {
      const failure = await server.client
        .callTool({ name: "write_file", arguments: { path: join(scratch, "big"), content: "x".repeat(12_000_000) } })
        .catch((error: unknown) => error as Error);
      expect((failure as Error).message).toContain("over this server's limit of 10485760 bytes");
      expect((failure as Error).message).toContain("--max-message-bytes");
      expect(existsSync(join(scratch, "big"))).toBe(false);
      expect(server.child.exitCode).toBeNull();
      expect((await call(server.client, "terminal", { command: "echo next" })).structuredContent).toMatchObject({
        output: "next\n",
      });
    });
  });

  it("drops a 512 MiB line that is not JSON without holding it, answers it, and serves the next call", async () => {
    const LINE_BYTES = 512 * 1024 * 1024;
    await withServer(["--backend", "local", "--cwd", scratch], async (server) => {
      const { answers } = answersOn(server.child.stdout!);
      // A first call, so the session and the tools' code are in memory before the peak is read.
      await call(server.client, "terminal", { command: "true" });
      const before = peakRss(server.child.pid!);
      await writeLongLine(server.child.stdin!, LINE_BYTES, "z");
      await eventually(() => answers.some((answer) => answer.id === null), "the error for the long line");
      expect(JSON.stringify(answers.find((answer) => answer.id === null))).toContain(
        `${LINE_BYTES} bytes, over this server's limit`,
      );
      const grown = peakRss(server.child.pid!) - before;
      // Holding the line would take 512 MiB, more as a string. What is held is the limit at most (10 MiB), plus
      // the pipe's chunks until the garbage collector frees them: 35 MiB on Node 20 and 60-80 MiB on Node 24,
      // whatever the line's length (measured with 128, 256 and 512 MiB), so the bound is a quarter of the line.
      expect(grown).toBeLessThan(LINE_BYTES / 4);
      expect((await call(server.client, "terminal", { command: "echo after" })).structuredContent).toMatchObject({
        output: "after\n",
      });
    });
  });

  it("takes the 12 MB write_file with --max-message-bytes raised, and refuses a bad value with exit 2", async () => {
    await withServer(["--backend", "local", "--cwd", scratch, "--max-message-bytes", "16777216"], async (server) => {
      const written = await call(server.client, "write_file", {
        path: join(scratch, "big"),
        content: "x".repeat(12_000_000),
      });
      expect(written.isError, JSON.stringify(written.structuredContent)).toBe(false);
    });
    for (const bad of ["0", "ten", "999999999999"]) {
      let failure: { status: number; stderr: string } | undefined;
      try {
        execFileSync(process.execPath, [fixture("run-mcp-cli.mjs"), "--max-message-bytes", bad], {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
        });
      } catch (error) {
        failure = error as { status: number; stderr: string };
      }
      expect(failure?.status).toBe(2);
      expect(failure?.stderr).toContain(`--max-message-bytes needs a whole number from 1 to 268435456, got "${bad}"`);
    }
  });
});
