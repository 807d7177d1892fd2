/** `shellwright serve`: argument handling, refusals, and a real run until stopped. */

import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseServeArgs, serve } from "../../src/cli/serve.js";
import { serveIo as io } from "../helpers/serve-io.js";
import { createEnvironment } from "../../src/index.js";
import { scratchDir, TOKEN } from "../gateway/helpers.js";
import { eventually } from "../helpers/processes.js";
import { HELPER_PID } from "../helpers/fast-path-pids.js";
import { noLocalHelper, skipUnless } from "../helpers/native-helper.js";
import { childrenNamed } from "../helpers/proc-scan.js";

describe("shellwright serve", () => {
  const scratch = scratchDir();
  afterAll(() => scratch.remove());

  it("refuses to start without a token, and says how to give one", async () => {
    const run = io();
    expect(await serve(["--port", "0"], run)).toBe(2);
    expect(run.err.join("")).toContain("no token: set $SHELLWRIGHT_GATEWAY_TOKEN or pass --token-file PATH");
  });

  it("refuses a token file other users can read", async () => {
    const file = join(scratch.path, "token");
    writeFileSync(file, TOKEN);
    chmodSync(file, 0o644);
    const run = io();
    expect(await serve(["--port", "0", "--token-file", file], run)).toBe(2);
    expect(run.err.join("")).toContain("chmod 600");
  });

  it("refuses --insecure-no-auth off loopback", async () => {
    const run = io();
    expect(await serve(["--port", "0", "--insecure-no-auth", "--host", "0.0.0.0"], run)).toBe(2);
    // The flags' words, not the library's (insecureNoAuth).
    expect(run.err.join("")).toBe(
      'shellwright serve: --insecure-no-auth is allowed only on a loopback --host (127.0.0.1, ::1, localhost), not "0.0.0.0"; set $SHELLWRIGHT_GATEWAY_TOKEN or pass --token-file PATH\n',
    );
  });

  it("says where a pool's backend option goes when the backend refuses the config", async () => {
    const run = io();
    expect(await serve(["--port", "0", "--insecure-no-auth", "--backend", "gateway", "--pool-size", "1"], run)).toBe(2);
    expect(run.err.join("")).toBe(
      'shellwright serve: the gateway backend needs "url": put it in a JSON config file and pass -c FILE.json, e.g. {"url": "http://127.0.0.1:7420"}\n',
    );
  });

  it("rejects unknown flags and bad numbers with exit 2", async () => {
    for (const args of [["--tokn", "x"], ["--port", "abc"], ["--port"]]) {
      const run = io({ SHELLWRIGHT_GATEWAY_TOKEN: TOKEN });
      expect(await serve(args, run)).toBe(2);
      expect(run.err.join("")).toMatch(/unknown option|whole number|needs a value/);
    }
  });

  it("parses its flags into gateway options", () => {
    const parsed = parseServeArgs([
      "--host",
      "127.0.0.2",
      "--port",
      "9000",
      "--allow-root",
      "/a",
      "--allow-root",
      "/b",
      "--cwd",
      "/a/w",
      "--max-sessions",
      "3",
      "--max-concurrent",
      "4",
      "--max-long-lived-per-session",
      "6",
      "--max-long-lived",
      "7",
      "--idle-timeout-ms",
      "5000",
      "--max-body-bytes",
      "1024",
      "--backend",
      "local",
    ]);
    expect(parsed).toEqual({
      tokenFile: undefined,
      insecureNoAuth: false,
      options: {
        host: "127.0.0.2",
        port: 9000,
        allowedRoots: ["/a", "/b"],
        cwd: "/a/w",
        maxSessions: 3,
        maxConcurrentExecutions: 4,
        maxLongLivedPerSession: 6,
        maxLongLivedExecutions: 7,
        idleTimeoutMs: 5000,
        maxBodyBytes: 1024,
        backend: { backend: "local" },
      },
    });
    expect(parseServeArgs(["--help"])).toBe("help");
  });

  it("serves with a token from a private file until stopped, printing its URL", async () => {
    const file = join(scratch.path, "private-token");
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    const run = io();
    const exited = serve(["--port", "0", "--token-file", file, "--allow-root", scratch.path], run);
    await eventually(() => run.out.length > 0, "the URL on stdout");
    const url = run.out[0]!.trim();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const env = await createEnvironment({ backend: "gateway", url, token: TOKEN });
    const r = await env.execute("pwd");
    expect(r.output).toBe(`${scratch.path}\n`);
    run.stop();
    expect(await exited).toBe(0);
    await expect(env.execute("true")).rejects.toMatchObject({ code: "BACKEND_UNAVAILABLE" });
  });

  it("checks --pool-size once, naming the flag and its value", async () => {
    for (const [value, message] of [
      ["0", '--pool-size needs a whole number of at least 1, got "0"'],
      ["two", '--pool-size needs a whole number of at least 1, got "two"'],
      ["257", '--pool-size must be at most 256, got "257"'],
    ] as const) {
      const run = io({ SHELLWRIGHT_GATEWAY_TOKEN: TOKEN });
      expect(await serve(["--port", "0", "--pool-size", value], run)).toBe(2);
      expect(run.err.join("")).toContain(message);
    }
    expect(parseServeArgs(["--pool-size", "3"])).toMatchObject({ options: { poolSize: 3 } });
  });

  it("with --pool-size, a client's session is one the server opened before the client asked", async (context) => {
    skipUnless(context, noLocalHelper);
    const run = io({ SHELLWRIGHT_GATEWAY_TOKEN: TOKEN });
    const exited = serve(["--port", "0", "--pool-size", "1", "--allow-root", scratch.path], run);
    await eventually(() => run.out.length > 0, "the URL on stdout");
    // The warm member's fast-path helper runs before any client has connected.
    await eventually(() => childrenNamed(process.pid, "swmux").length === 1, "the warm member's helper");
    const warm = childrenNamed(process.pid, "swmux");
    const env = await createEnvironment({ backend: "gateway", url: run.out[0]!.trim(), token: TOKEN });
    expect(Number((await env.execute(HELPER_PID)).output)).toBe(warm[0]);
    expect((await env.execute("pwd")).output).toBe(`${scratch.path}\n`);
    await env.close();
    run.stop();
    expect(await exited).toBe(0);
  });
});
