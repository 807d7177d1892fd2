/** Session behaviour that is the same on every backend, checked on the local one. */

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createEnvironment,
  InvalidOptionError,
  isShellwrightError,
  SessionClosedError,
  type Environment,
} from "../../src/index.js";

let env: Environment;
beforeAll(async () => {
  env = await createEnvironment({ backend: "local" });
});
afterAll(async () => {
  await env.close();
});

describe("limits", () => {
  it("keeps memory bounded while a command prints 1 GB, and says how much was cut", async () => {
    // A full collection before every sample: the garbage a fast stream leaves between
    // V8's own collections depends on when V8 gets to run them (later on a loaded
    // machine, where CI once saw 137 MB of it); what the session holds does not.
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const rss = (): number => {
      gc();
      return process.memoryUsage().rss;
    };
    const before = rss();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rss());
    }, 50);
    const result = await env.execute("head -c 1000000000 /dev/zero | tr '\\0' a", { timeoutMs: 120_000 });
    clearInterval(sampler);
    peak = Math.max(peak, rss());
    expect(result.exitCode).toBe(0);
    expect(result.truncated).toBe(true);
    expect(result.output).toContain("bytes omitted out of 1000000000 total");
    expect(result.output.length).toBeLessThan(50_200);
    expect(peak - before).toBeLessThan(100 * 1024 * 1024);
    // Beyond the command's own 120 s: 1 GB through a pipe with a full GC every 50 ms took over 60 s at a load of 10.
  }, 240_000);

  it("cuts to the configured size, 40% head and 60% tail", async () => {
    const small = await createEnvironment({ maxOutputBytes: 1000 });
    try {
      const result = await small.execute("printf 'H%.0s' {1..600}; printf 'x%.0s' {1..5000}; printf 'T%.0s' {1..700}");
      expect(
        result.output.startsWith(`${"H".repeat(400)}\n\n... [OUTPUT TRUNCATED - 5300 bytes omitted out of 6300 total]`),
      ).toBe(true);
      expect(result.output.endsWith(`\n\n${"T".repeat(600)}`)).toBe(true);
    } finally {
      await small.close();
    }
  });

  it("streams output without the marker", async () => {
    const seen: string[] = [];
    const result = await env.execute("echo one; sleep 0.2; echo two", { onOutput: (text) => seen.push(text) });
    expect(seen.join("")).toBe("one\ntwo\n");
    expect(result.output).toBe("one\ntwo\n");
  });

  it("streams the same text it returns: a leading BOM, a character split between writes, invalid bytes", async () => {
    let seen = "";
    const result = await env.execute(String.raw`printf '\xef\xbb\xbfa\xe2\x82'; sleep 0.2; printf '\xac\xff b\n'`, {
      onOutput: (text) => (seen += text),
    });
    expect(result.output).toBe("\ufeffa\u20ac\ufffd b\n");
    expect(seen).toBe(result.output);
  });

  it("reports a signal death as 128 + the signal", async () => {
    expect((await env.execute("kill -9 $BASHPID")).exitCode).toBe(137);
  });

  it("answers an already-aborted signal without running anything", async () => {
    const result = await env.execute("touch /tmp/sw-should-not-exist-$$", { signal: AbortSignal.abort() });
    expect(result).toMatchObject({ exitCode: 130, interrupted: true });
  });
});

describe("bad input", () => {
  const bad: [string, () => Promise<unknown>, string][] = [
    ["a NUL in the command", () => env.execute("echo a\0b"), "command must not contain a NUL byte"],
    ["a NUL in the cwd", () => env.execute("pwd", { cwd: "/tmp\0x" }), "cwd must not contain a NUL byte"],
    [
      "a negative timeout",
      () => env.execute("true", { timeoutMs: -5 }),
      "timeoutMs must be a positive number of milliseconds, got -5",
    ],
    ["a NaN timeout", () => env.execute("true", { timeoutMs: Number.NaN }), "got NaN"],
    [
      "an unknown execute option",
      () => env.execute("true", { timeout: 5 } as never),
      'Unknown execute option "timeout"',
    ],
    [
      "stdin of the wrong type",
      () => env.execute("cat", { stdin: 5 } as never),
      "stdin must be a string or a Uint8Array, got 5",
    ],
    ["an unknown backend", () => createEnvironment({ backend: "nope" } as never), 'Unknown backend "nope"'],
    [
      "an unknown config option",
      () => createEnvironment({ timeout: 5 } as never),
      'Unknown local backend option "timeout"',
    ],
    [
      "a zero timeout in config",
      () => createEnvironment({ timeoutMs: 0 }),
      "timeoutMs must be a positive number of milliseconds, got 0",
    ],
    ["env with a bad name", () => createEnvironment({ env: { "A-B": "x" } }), 'env has an invalid variable name "A-B"'],
  ];
  for (const [what, call, message] of bad) {
    it(`rejects ${what} with a clear TypeError`, async () => {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error).toBeInstanceOf(TypeError);
      expect(isShellwrightError(error)).toBe(true);
      expect((error as Error).message).toContain(message);
    });
  }

  it("says the removed persistent option was removed", async () => {
    const error = await createEnvironment({ persistent: true } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toContain("`persistent` option was removed");
  });

  it("fails to start on a cwd that does not exist, naming it", async () => {
    const error = await createEnvironment({ cwd: "/no/such/dir" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toContain('cwd "/no/such/dir" cannot be entered');
  });

  it("refuses to run after close", async () => {
    const closed = await createEnvironment();
    await closed.close();
    await expect(closed.execute("true")).rejects.toBeInstanceOf(SessionClosedError);
  });

  it("keeps the session working after bad input", async () => {
    await env.execute("").catch(() => undefined);
    expect((await env.execute("echo fine")).output).toBe("fine\n");
  });
});
