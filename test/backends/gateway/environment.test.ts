/**
 * The gateway backend against a real `serve` on loopback: its typed errors,
 * its retries, restarts of the gateway, and many clients at once. (The compat
 * suite covers the execute() contract itself.)
 */

import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  BackendUnavailableError,
  createEnvironment,
  InvalidOptionError,
  SessionClosedError,
  type Environment,
  type Gateway,
} from "../../../src/index.js";
import { startTestGateway, TOKEN } from "../../gateway/helpers.js";
import { eventually } from "../../helpers/processes.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function gatewayFor(options: Parameters<typeof startTestGateway>[0] = {}): Promise<Gateway> {
  const gateway = await startTestGateway(options);
  cleanups.push(() => gateway.close());
  return gateway;
}

async function connect(gateway: Gateway | string, extra: Record<string, unknown> = {}): Promise<Environment> {
  const env = await createEnvironment({
    backend: "gateway",
    url: typeof gateway === "string" ? gateway : gateway.url,
    token: TOKEN,
    ...extra,
  });
  cleanups.push(() => env.close());
  return env;
}

/** A loopback port nothing listens on. */
/** A session opened with the token only in $SHELLWRIGHT_GATEWAY_TOKEN (set to `token`, removed after) runs a call. */
async function expectWorksWithTokenFromEnv(gateway: Gateway, token: string): Promise<void> {
  process.env.SHELLWRIGHT_GATEWAY_TOKEN = token;
  try {
    const env = await createEnvironment({ backend: "gateway", url: gateway.url });
    cleanups.push(() => env.close());
    expect((await env.execute("echo ok")).output).toBe("ok\n");
  } finally {
    delete process.env.SHELLWRIGHT_GATEWAY_TOKEN;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("gateway backend", () => {
  it("validates its options before any request", async () => {
    await expect(createEnvironment({ backend: "gateway", url: "not a url" })).rejects.toMatchObject({ option: "url" });
    await expect(createEnvironment({ backend: "gateway", url: "ftp://127.0.0.1/" })).rejects.toThrow(
      /http:\/\/ or https:\/\//,
    );
    await expect(
      createEnvironment({ backend: "gateway", url: "http://127.0.0.1:1", tokn: "x" } as never),
    ).rejects.toMatchObject({ option: "tokn" });
    await expect(
      createEnvironment({ backend: "gateway", url: "http://127.0.0.1:1", timeoutMs: -5 }),
    ).rejects.toMatchObject({ option: "timeoutMs" });
    await expect(
      createEnvironment({ backend: "gateway", url: "http://127.0.0.1:1", persistent: true } as never),
    ).rejects.toMatchObject({ option: "persistent" });
  });

  it("takes a timeout as long as Node's longest timer without a timer overflow warning", async () => {
    const env = await connect(await gatewayFor());
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on("warning", onWarning);
    try {
      expect((await env.execute("echo ok", { timeoutMs: 2 ** 31 - 1 })).output).toBe("ok\n");
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on a later tick
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("TimeoutOverflowWarning");
  });

  it("throws BackendUnavailableError when nothing listens, after retrying briefly", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const error = await createEnvironment({ backend: "gateway", url, token: TOKEN, connectRetryMs: 200 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect((error as BackendUnavailableError).code).toBe("BACKEND_UNAVAILABLE");
    expect((error as Error).message).toContain("is `shellwright serve` running?");
  });

  it("throws BackendUnavailableError naming the token when the gateway refuses it", async () => {
    const gateway = await gatewayFor();
    const error = await createEnvironment({
      backend: "gateway",
      url: gateway.url,
      token: "wrong-token-0123456789",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect((error as Error).message).toMatch(/refused the token \(401\)/);
    expect(gateway.registry.size).toBe(0);
  });

  it("takes the token from $SHELLWRIGHT_GATEWAY_TOKEN", async () => {
    const gateway = await gatewayFor();
    await expectWorksWithTokenFromEnv(gateway, TOKEN);
  });

  it("takes a token read from a file, its final newline included, as the server takes its own file", async () => {
    const gateway = await gatewayFor();
    const env = await connect(gateway, { token: `${TOKEN}\n` });
    expect((await env.execute("echo ok")).output).toBe("ok\n");
    await expectWorksWithTokenFromEnv(gateway, ` ${TOKEN}\r\n`);
    await expect(connect(gateway, { token: "two words" })).rejects.toMatchObject({ option: "token" });
  });

  it("turns a cwd outside the gateway's roots into InvalidOptionError", async () => {
    const gateway = await gatewayFor({ allowedRoots: ["/tmp"] });
    await expect(connect(gateway, { cwd: "/etc" })).rejects.toMatchObject({
      name: "InvalidOptionError",
      option: "cwd",
    });
    const env = await connect(gateway, { cwd: "/tmp" });
    const error = await env.execute("pwd", { cwd: "/" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).message).toContain("outside the gateway's allowed roots");
  });

  it("passes session options through and reports the gateway's warnings", async () => {
    const gateway = await gatewayFor();
    const warnings: string[] = [];
    const env = await connect(gateway, {
      cwd: "/",
      env: { SW_OPT: "v" },
      maxOutputBytes: 100,
      initTimeoutMs: 10_000,
      onWarning: (m: string) => warnings.push(m),
    });
    expect(env).toMatchObject({ backend: "gateway", cwd: "/", snapshotReady: true, closed: false });
    expect(env.id).toMatch(/^[0-9a-f]{12}$/);
    expect((await env.execute("echo $SW_OPT")).output).toBe("v\n");
    const long = await env.execute("seq 1 1000");
    expect(long.truncated).toBe(true);
    expect(long.output.length).toBeLessThan(400);
    expect(warnings).toEqual([]);
  });

  it("takes maxOutputChars, the old name of maxOutputBytes, with one warning, and the gateway gets the cap", async () => {
    const gateway = await gatewayFor();
    const warnings: string[] = [];
    const env = await connect(gateway, { maxOutputChars: 100, onWarning: (m: string) => warnings.push(m) });
    const long = await env.execute("seq 1 1000");
    expect(long.truncated).toBe(true);
    expect(long.output.length).toBeLessThan(400);
    expect(warnings).toEqual([expect.stringMatching(/maxOutputChars is deprecated; use maxOutputBytes/)]);
  });

  it("reattaches to a session with resume", async () => {
    const gateway = await gatewayFor();
    const first = await connect(gateway);
    await first.execute("export SW_RESUMED=yes; cd /tmp");
    const again = await connect(gateway, { resume: first.state() });
    expect(again.id).toBe(first.id);
    expect(again.cwd).toBe("/tmp");
    expect((await again.execute("echo $SW_RESUMED")).output).toBe("yes\n");
  });

  it("interrupts even when the abort comes before the gateway has seen the command", async () => {
    const gateway = await gatewayFor();
    const env = await connect(gateway);
    const controller = new AbortController();
    const pending = env.execute("sleep 30; echo never", { signal: controller.signal });
    controller.abort();
    const r = await pending;
    expect(r).toMatchObject({ exitCode: 130, interrupted: true });
    expect(r.output).not.toContain("never");
    await eventually(() => gateway.registry.runningExecutions === 0);
    expect((await env.execute("echo after")).output).toBe("after\n");
  });

  it("an interrupt whose answer is lost still gives 130 with what was streamed, and the command dies", async () => {
    const gateway = await gatewayFor();
    const env = await connect(gateway);
    const controller = new AbortController();
    const r = await env.execute("echo spawned; sleep 60", {
      signal: controller.signal,
      onOutput: (text) => {
        if (!text.includes("spawned")) return;
        gateway.server.closeAllConnections();
        controller.abort();
      },
    });
    expect(r).toMatchObject({ exitCode: 130, interrupted: true });
    // (a trailing newline may still be held back by the marker scanner when the answer is lost)
    expect(r.output).toMatch(/^spawned\n{1,2}\[Command interrupted\]$/);
    await eventually(() => gateway.registry.runningExecutions === 0, "the command to be killed");
    expect((await env.execute("echo after")).output).toBe("after\n");
  });

  it("throws SessionClosedError when the session is closed on the gateway", async () => {
    const gateway = await gatewayFor();
    const env = await connect(gateway);
    await fetch(`${gateway.url}/v1/sessions/${env.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const error = await env.execute("true").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionClosedError);
    expect((error as Error).message).toMatch(/gone/);
    expect(env.closed).toBe(true);
  });

  describe("a gateway that restarts", () => {
    it("graceful stop: the running command ends with a clear error, then the session is gone after the restart", async () => {
      const gateway = await startTestGateway();
      const env = await connect(gateway, { connectRetryMs: 300 });
      const running = env.execute("sleep 60").catch((e: unknown) => e);
      await eventually(() => gateway.registry.runningExecutions === 1);
      await gateway.close();
      const error = await running;
      expect(error).toBeInstanceOf(BackendUnavailableError);
      expect((error as Error).message).toContain("shutting down");

      // While it is down: refused, retried for connectRetryMs, then a clear error.
      const down = await env.execute("true").catch((e: unknown) => e);
      expect(down).toBeInstanceOf(BackendUnavailableError);
      expect((down as Error).message).toContain("nothing listens there");

      const restarted = await gatewayFor({ port: gateway.port });
      expect(restarted.url).toBe(gateway.url);
      const gone = await env.execute("true").catch((e: unknown) => e);
      expect(gone).toBeInstanceOf(SessionClosedError);
    });

    it("crash: connections cut mid-command give a clear error, not a hang", async () => {
      const gateway = await gatewayFor();
      const env = await connect(gateway);
      for (const onOutput of [undefined, () => undefined]) {
        const running = env.execute("echo started; sleep 60", onOutput ? { onOutput } : {}).catch((e: unknown) => e);
        await eventually(() => gateway.registry.runningExecutions === 1);
        gateway.server.closeAllConnections();
        const error = await running;
        expect(error).toBeInstanceOf(BackendUnavailableError);
        expect((error as Error).message).toContain("lost mid-request");
        // The gateway saw the hang-up and killed the command.
        await eventually(() => gateway.registry.runningExecutions === 0);
      }
    });

    it("retries a request whose kept-alive connection the gateway had closed", async () => {
      const gateway = await gatewayFor();
      const env = await connect(gateway);
      expect((await env.execute("echo one")).output).toBe("one\n");
      // Drops the idle keep-alive socket the client would reuse next.
      gateway.server.closeIdleConnections();
      expect((await env.execute("echo two")).output).toBe("two\n");
    });
  });

  it("serves 50 clients running 10 commands each at once, every result correct", async () => {
    const gateway = await gatewayFor({ maxSessions: 50, maxConcurrentExecutions: 16 });
    // A HOME without a profile: this is about the gateway's concurrency, and fifty runs of a heavy login profile
    // (root's runs pyenv here) take a slow machine's two cores longer than an open may wait (test/core/init-gate.test.ts).
    const home = mkdtempSync(join(tmpdir(), "gateway-clients-"));
    cleanups.push(async () => rmSync(home, { recursive: true, force: true }));
    const clients = await Promise.all(
      Array.from({ length: 50 }, (_, c) => connect(gateway, { env: { SW_CLIENT: String(c), HOME: home } })),
    );
    const failures: string[] = [];
    await Promise.all(
      clients.map(async (env, c) => {
        for (let i = 0; i < 10; i++) {
          const r = await env.execute(
            `echo "$SW_CLIENT:${i}:$SW_PREV"; export SW_PREV=${i}`,
            i % 5 === 0 ? { stdin: `in-${c}-${i}` } : {},
          );
          const expected = `${c}:${i}:${i === 0 ? "" : i - 1}\n`;
          if (r.exitCode !== 0 || r.output !== expected)
            failures.push(
              `client ${c} call ${i}: ${JSON.stringify(r.output)} exit ${r.exitCode}, wanted ${JSON.stringify(expected)}`,
            );
        }
      }),
    );
    expect(failures).toEqual([]);
    expect(gateway.registry.size).toBe(50);
    expect(gateway.registry.runningExecutions).toBe(0);
  }, 180_000);
});
