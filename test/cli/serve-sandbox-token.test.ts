/**
 * `serve --sandbox --token-file F`: a session the gateway serves cannot read
 * F, and the gateway masks its own token in whatever a session sends back
 * (issue 22 point 2). The adversary is a model that runs `cat F`, or got the
 * token into a variable some other way and prints it, whole or in pieces
 * that arrive as separate chunks of a stream.
 */

import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve } from "../../src/cli/serve.js";
import { REDACTED } from "../../src/core/redact.js";
import { HAVE_BWRAP, SKIP_REASON } from "../backends/local/sandbox/fixture.js";
import { noLocalHelper } from "../helpers/native-helper.js";

describe.skipIf(!HAVE_BWRAP)(`serve --sandbox --token-file (${HAVE_BWRAP ? "bwrap" : SKIP_REASON})`, () => {
  const token = `gw-${randomBytes(24).toString("hex")}`;
  // Under /var/tmp, not /tmp: the sandbox's /tmp is its own, so a file there would prove nothing.
  const dir = mkdtempSync("/var/tmp/shellwright-serve-token-");
  const tokenFile = join(dir, "token");
  const controller = new AbortController();
  const out: string[] = [];
  const err: string[] = [];
  let served: Promise<number>;
  let url = "";
  let session = "";

  const request = async (path: string, body: unknown): Promise<Response> =>
    fetch(`${url}/v1${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const execute = async (command: string): Promise<{ output: string }> =>
    (await (await request(`/sessions/${session}/executions`, { command })).json()) as { output: string };
  const executeStreamed = async (command: string): Promise<{ streamed: string; output: string }> => {
    const text = await (await request(`/sessions/${session}/executions`, { command, stream: true })).text();
    const events = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; text?: string; result?: { output: string } });
    const streamed = events.map((e) => (e.type === "output" ? e.text : "")).join("");
    return { streamed, output: events.find((e) => e.type === "result")?.result?.output ?? "" };
  };

  beforeAll(async () => {
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    served = serve(["--port", "0", "--sandbox", "--token-file", tokenFile, "--cwd", dir], {
      env: {},
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
      signal: controller.signal,
    });
    const deadline = Date.now() + 20_000;
    while (out.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    url = (out[0] ?? "").trim();
    if (url === "") throw new Error(`serve did not start: ${err.join("")}`);
    // The token in a variable of the session, as if it leaked in some way the server cannot see.
    const created = await request("/sessions", { env: { LEAKED: token } });
    session = ((await created.json()) as { id: string }).id;
  }, 30_000);

  afterAll(async () => {
    controller.abort();
    await served;
    rmSync(dir, { recursive: true, force: true });
  });

  it("the session cannot read the token file", async () => {
    const r = await execute(
      `cat /proc/$PPID/comm; cat ${tokenFile}; grep -c . ${tokenFile} 2>/dev/null || echo HIDDEN`,
    );
    // Where the helper was built the call runs on the fast path, which enters the sandbox its own way.
    if (noLocalHelper === undefined) expect(r.output).toMatch(/^swmux/);
    expect(r.output).not.toContain(token.slice(3, 20));
    expect(r.output).toContain("HIDDEN"); // covered: it reads as nothing, or not at all
  });

  it("masks the server's token in a result", async () => {
    const r = await execute('echo "token: $LEAKED"');
    expect(r.output).toBe(`token: ${REDACTED}\n`);
  });

  it("masks the server's token in a stream, split between chunks", async () => {
    const r = await executeStreamed('printf "a %s" "${LEAKED:0:20}"; sleep 0.3; printf "%s b\\n" "${LEAKED:20}"');
    expect(r.streamed).toBe(`a ${REDACTED} b\n`);
    expect(r.output).toBe(`a ${REDACTED} b\n`);
  });
});
