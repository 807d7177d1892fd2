/**
 * `mcp --http --sandbox --token-file F`: a session the MCP server opens cannot
 * read F, and the tools mask the server's own token in whatever a session
 * sends back (issue 22 point 2), as serve does (serve-sandbox-token.test.ts).
 * The adversary is a model that runs `cat F`, or got the token into a
 * variable some other way and prints it, whole or in pieces that arrive as
 * separate chunks of the stream the progress notifications carry.
 * The server is the real process (dist/, as `shellwright mcp` runs it).
 */

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDACTED } from "../../src/core/redact.js";
import { HAVE_BWRAP, SKIP_REASON } from "../backends/local/sandbox/fixture.js";
import { noLocalHelper } from "../helpers/native-helper.js";
import { eventually } from "../helpers/processes.js";
import { fixture } from "../mcp/helpers.js";

const output = (result: CallToolResult): string => (result.structuredContent as { output: string }).output;

describe.skipIf(!HAVE_BWRAP)(`mcp --http --sandbox --token-file (${HAVE_BWRAP ? "bwrap" : SKIP_REASON})`, () => {
  const token = `mcp-${randomBytes(24).toString("hex")}`;
  // Under /var/tmp, not /tmp: the sandbox's /tmp is its own, so a file there would prove nothing.
  const dir = mkdtempSync("/var/tmp/shellwright-mcp-token-");
  const tokenFile = join(dir, "token");
  const configFile = join(dir, "config.json");
  let child: ChildProcess;
  let exited: Promise<number | null>;
  let client: Client;

  beforeAll(async () => {
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    // The token in a variable of the session, as if it leaked in some way the server cannot see.
    writeFileSync(configFile, JSON.stringify({ env: { LEAKED: token } }), { mode: 0o600 });
    child = spawn(
      process.execPath,
      [
        fixture("run-mcp-cli.mjs"),
        ...["--http", "--port", "0", "--sandbox", "--token-file", tokenFile],
        ...["--config", configFile, "--cwd", dir],
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    let stderr = "";
    child.stderr!.on("data", (data: Buffer) => (stderr += data.toString()));
    await eventually(
      () => /MCP server on (\S+)/.test(stderr) || child.exitCode !== null,
      "the server to say its address",
    );
    const url = /MCP server on (\S+)/.exec(stderr)?.[1];
    if (url === undefined) throw new Error(`mcp --http did not start: ${stderr}`);
    client = new Client({ name: "mcp-sandbox-token", version: "0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    if (child?.exitCode === null) child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  });

  const terminal = async (command: string, updates?: Progress[]): Promise<CallToolResult> =>
    (await client.callTool(
      { name: "terminal", arguments: { command } },
      undefined,
      updates === undefined ? undefined : { onprogress: (progress) => updates.push(progress) },
    )) as CallToolResult;

  it("the session cannot read the token file", async () => {
    const r = await terminal(
      `cat /proc/$PPID/comm; cat ${tokenFile}; grep -c . ${tokenFile} 2>/dev/null || echo HIDDEN`,
    );
    const text = output(r);
    // The session's calls run where the helper was built on the fast path, which enters the sandbox its own way.
    if (noLocalHelper === undefined) expect(text).toMatch(/^swmux/);
    expect(text).not.toContain(token.slice(4, 20));
    expect(text).toContain("HIDDEN"); // covered: it reads as nothing, or not at all
  });

  it("masks the server's token in a result", async () => {
    expect(output(await terminal('echo "token: $LEAKED"'))).toBe(`token: ${REDACTED}\n`);
  });

  it("masks the server's token in the progress stream, split between chunks", async () => {
    const updates: Progress[] = [];
    const r = await terminal(
      'printf "a %s" "${LEAKED:0:20}"; sleep 0.3; printf "%s b\\n" "${LEAKED:20}"; sleep 0.3; echo "c $LEAKED"',
      updates,
    );
    expect(output(r)).toBe(`a ${REDACTED} b\nc ${REDACTED}\n`);
    expect(updates.length).toBeGreaterThan(0);
    const streamed = updates.map((update) => update.message ?? "").join("\n");
    for (const piece of [token.slice(4, 20), token.slice(24)]) expect(streamed).not.toContain(piece);
  });
});
