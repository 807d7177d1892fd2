/**
 * The Daytona adapter against a FAKE Daytona client (test/fakes/fake-daytona.ts)
 * that runs each command with sh on this machine: Daytona's cloud cannot be
 * reached here. What the compat suite cannot show: resume and recreate, the
 * restart of a stopped sandbox, how a timeout is delivered and its
 * last-resort stop, SDK errors, the timeout backstop's composition with the
 * wrapper, and which SDK calls carry stdin and exact output bytes.
 */

import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DaytonaTransport } from "../../../src/backends/daytona/transport.js";
import { Session } from "../../../src/core/session.js";
import {
  BackendUnavailableError,
  createEnvironment,
  InvalidOptionError,
  type Environment,
} from "../../../src/index.js";
import { FakeDaytona } from "../../fakes/fake-daytona.js";
import { InitlessBox } from "../../fakes/initless-box.js";
import { eventually } from "../../helpers/processes.js";

const work = mkdtempSync(join(tmpdir(), "sw-daytona-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function withDaytona<T>(
  client: FakeDaytona,
  config: Record<string, unknown>,
  fn: (env: Environment) => Promise<T>,
): Promise<T> {
  const env = await createEnvironment({ backend: "daytona", client, ...config });
  try {
    return await fn(env);
  } finally {
    await env.close();
  }
}

const isKillScript = (command: string): boolean => command.includes("__shellwright_killed");

describe("daytona backend (fake SDK client)", () => {
  it("keeps output whose logs arrive after the exit code (two channels: nothing orders them)", async () => {
    const client = new FakeDaytona();
    await withDaytona(client, { fastPath: false }, async (env) => {
      // Later than the session's drain after an exit once was (250 ms): the whole reply, marker included, lost.
      client.last.process.logDelayMs = 600;
      expect(await env.execute("echo first; printf last")).toMatchObject({ exitCode: 0, output: "first\nlast" });
      expect(await env.execute("export LATE=kept; exit 3")).toMatchObject({ exitCode: 3 });
      expect((await env.execute("echo $LATE")).output).toBe("kept\n");
    });
  });

  it("creates a sandbox with image, name, labels, resources and env, and deletes it on close by default", async () => {
    const client = new FakeDaytona();
    await withDaytona(
      client,
      { image: "debian:bookworm", cpus: 2, memoryMiB: 4096, diskGiB: 8, autoStopMinutes: 0, env: { SW_KEY: "k3y" } },
      async (env) => {
        expect(client.last.params).toMatchObject({
          image: "debian:bookworm",
          resources: { cpu: 2, memory: 4, disk: 8 },
          autoStopInterval: 0,
          envVars: { SW_KEY: "k3y" },
        });
        expect((await env.execute("echo $SW_KEY")).output).toBe("k3y\n");
        for (const command of client.last.process.sessionCommands) expect(command).not.toContain("k3y");
      },
    );
    expect(client.last.calls).toContain("delete");
  });

  it("still takes the deprecated cpu and memoryGiB, each with one warning", async () => {
    const client = new FakeDaytona();
    const warnings: string[] = [];
    await withDaytona(
      client,
      { image: "debian:bookworm", cpu: 2, memoryGiB: 4, onWarning: (message: string) => warnings.push(message) },
      async () => {
        expect(client.last.params).toMatchObject({ resources: { cpu: 2, memory: 4 } });
      },
    );
    expect(warnings).toEqual([
      expect.stringMatching(/^cpu is deprecated; use cpus/),
      expect.stringMatching(/^memoryGiB is deprecated; use memoryMiB/),
    ]);
  });

  it("refuses an old and a new spelling together, and memory Daytona cannot take", async () => {
    const client = new FakeDaytona();
    await expect(createEnvironment({ backend: "daytona", client, memoryMiB: 4096, memoryGiB: 4 })).rejects.toThrow(
      /Pass memoryMiB or memoryGiB, not both/,
    );
    await expect(createEnvironment({ backend: "daytona", client, cpus: 2, cpu: 2 })).rejects.toThrow(
      /Pass cpus or cpu, not both/,
    );
    const error = await createEnvironment({ backend: "daytona", client, memoryMiB: 1536 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe("memoryMiB");
    expect((error as Error).message).toMatch(
      /memoryMiB must be a whole number of GiB \(a multiple of 1024\) for Daytona, got 1536/,
    );
    expect(client.sandboxes).toHaveLength(0);
  });

  it("resumes a stopped sandbox by name, starts it, and only stops it on close", async () => {
    const client = new FakeDaytona();
    const existing = await client.create({ name: "proj", image: "x" });
    await existing.stop();
    await withDaytona(client, { name: "proj" }, async (env) => {
      expect((await env.execute("echo resumed")).output).toBe("resumed\n");
    });
    expect(client.sandboxes).toHaveLength(1);
    expect(client.calls).toContain("get proj");
    expect(existing.calls).toEqual(expect.arrayContaining(["start", "stop"]));
    expect(existing.calls).not.toContain("delete");
  });

  it("resumes by label, and creates a labelled sandbox when none matches", async () => {
    const client = new FakeDaytona();
    const tagged = await client.create({ labels: { task: "t1" } });
    await withDaytona(client, { labels: { task: "t1" } }, async (env) => {
      expect((await env.execute("echo one")).exitCode).toBe(0);
    });
    expect(client.sandboxes).toHaveLength(1);
    expect(tagged.calls).toContain("stop");
    await withDaytona(client, { labels: { task: "t2" } }, async (env) => {
      expect((await env.execute("echo two")).exitCode).toBe(0);
    });
    expect(client.sandboxes).toHaveLength(2);
    expect(client.last.labels).toEqual({ task: "t2" });
  });

  it("starts a sandbox that was stopped between commands, keeping the session's state", async () => {
    const client = new FakeDaytona();
    await withDaytona(client, {}, async (env) => {
      await env.execute(`export SW_KEPT=yes; cd ${work}`);
      await client.last.stop(); // Daytona's auto-stop, behind our back
      const r = await env.execute("echo $SW_KEPT; pwd");
      expect(r).toMatchObject({ exitCode: 0, output: `yes\n${work}\n` });
      expect(client.last.calls.filter((c) => c === "start")).toHaveLength(1);
    });
  });

  it("creates a new sandbox when the old one was deleted", async () => {
    const client = new FakeDaytona();
    await withDaytona(client, { name: "gone-soon" }, async (env) => {
      await env.execute("true");
      await client.last.delete();
      expect((await env.execute("echo again")).output).toContain("again\n");
      expect(client.sandboxes).toHaveLength(2);
      expect(client.last.name).toBe("gone-soon");
    });
  });

  it("kills a timed-out command inside the sandbox and keeps the sandbox running", async () => {
    const client = new FakeDaytona();
    await withDaytona(client, {}, async (env) => {
      const pidFile = join(work, "daytona-sleeper");
      const r = await env.execute(`echo before; sleep 300 & echo $! > ${pidFile}; wait`, { timeoutMs: 1000 });
      expect(r).toMatchObject({ exitCode: 124, timedOut: true, output: "before\n\n[Command timed out after 1s]" });
      expect(client.last.process.executed.filter(isKillScript).length).toBeGreaterThanOrEqual(1);
      expect(client.last.calls).not.toContain("stop");
      const gone = await env.execute(
        `p=$(cat ${pidFile}); [ -e /proc/$p ] && ! grep -q ') Z' /proc/$p/stat && echo alive || echo gone`,
      );
      expect(gone.output).toBe("gone\n");
    });
  });

  it("kills an interrupted command whose PID has not come yet by its mark, and keeps the sandbox running", async () => {
    // Its logs are late (or the interrupt came the moment it started): the tree kill has no PID. The last resort
    // used to stop the sandbox, every other process of the session with it (the output follower of a background
    // process, stopped early, did that in the compat suite).
    const client = new FakeDaytona();
    await withDaytona(client, { fastPath: false }, async (env) => {
      const keeper = join(work, "daytona-keeper");
      const victim = join(work, "daytona-victim");
      await env.execute(`export KEPT=1; sleep 302 > /dev/null 2>&1 & echo $! > ${keeper}`);
      client.last.process.logDelayMs = 600;
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      const r = await env.execute(`echo late; sleep 301 & echo $! > ${victim}; wait`, { signal: controller.signal });
      expect(r).toMatchObject({ exitCode: 130, interrupted: true });
      client.last.process.logDelayMs = 0;
      expect(client.last.calls).not.toContain("stop");
      const alive = (file: string): string =>
        `p=$(cat ${file}); [ -e /proc/$p ] && ! grep -q ') Z' /proc/$p/stat && echo alive || echo gone`;
      expect((await env.execute(`${alive(victim)}; ${alive(keeper)}; echo $KEPT`)).output).toBe("gone\nalive\n1\n");
      await env.execute(`kill $(cat ${keeper})`);
    });
  });

  it("stops the sandbox only when the in-sandbox kill fails, and the next command starts it again", async () => {
    const client = new FakeDaytona();
    await withDaytona(client, {}, async (env) => {
      await env.execute("export SW_BEFORE=1");
      client.last.process.failExecuteCommand = (command) =>
        isKillScript(command) ? new Error("toolbox request timed out") : undefined;
      const r = await env.execute("echo partial; sleep 300", { timeoutMs: 800 });
      expect(r).toMatchObject({ exitCode: 124, timedOut: true, output: "partial\n\n[Command timed out after 0.8s]" });
      expect(client.last.calls).toContain("stop");
      client.last.process.failExecuteCommand = undefined;
      expect((await env.execute("echo $SW_BEFORE")).output).toBe("1\n");
      expect(client.last.calls).toContain("start");
      expect(client.sandboxes).toHaveLength(1);
    });
  });

  it("keeps the SDK's error message in a typed error", async () => {
    const client = new FakeDaytona();
    // Per-command SDK use: the plain path's (a fast call is a line on the helper's stdin).
    await withDaytona(client, { fastPath: false }, async (env) => {
      client.last.process.failSessionCommand = new Error("Request failed with status code 502: toolbox unavailable");
      const error = await env.execute("echo hi").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackendUnavailableError);
      expect((error as Error).message).toBe(
        "daytona exec failed: Request failed with status code 502: toolbox unavailable",
      );
      client.last.process.failSessionCommand = undefined;
      expect((await env.execute("echo hi")).output).toBe("hi\n");
    });
  });

  it("uploads every stdin as a file in the session's private directory, delivers it byte-exact, and removes it", async () => {
    const client = new FakeDaytona();
    // Per-command SDK use: the plain path's (a fast call is a line on the helper's stdin).
    let dir = "";
    await withDaytona(client, { fastPath: false }, async (env) => {
      const data = Buffer.alloc(300_000);
      for (let i = 0; i < data.length; i++) data[i] = (i * 13 + 5) % 256;
      // The file is unlinked before the command starts (issue 37.7): its stdin is a deleted file.
      // Every plain call has a stdin (its key comes first): one upload each.
      const uploadsBefore = client.last.fs.calls.filter((c) => c.startsWith("uploadFile ")).length;
      const r = await env.execute("readlink /proc/self/fd/0; sha256sum | cut -c1-64", { stdin: data });
      expect(r.output).toMatch(/^\/tmp\/shellwright-daytona-[A-Za-z0-9]{8}\/stdin-[0-9a-f]+ \(deleted\)\n/);
      expect(r.output.split("\n")[1]).toBe(createHash("sha256").update(data).digest("hex"));
      const uploads = client.last.fs.calls.filter((c) => c.startsWith("uploadFile ")).slice(uploadsBefore);
      expect(uploads).toHaveLength(1);
      expect(existsSync(uploads[0]!.slice("uploadFile ".length))).toBe(false);
      dir = uploads[0]!.slice("uploadFile ".length).replace(/\/[^/]+$/, "");
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      // A small stdin too (a password for `--password-stdin`): never on a command line, where ps would show it.
      const secret = "pw-for-stdin-0123";
      expect((await env.execute("cat", { stdin: secret })).output).toBe(secret);
      expect(client.last.fs.calls.filter((c) => c.startsWith("uploadFile "))).toHaveLength(uploadsBefore + 2);
      expect(client.last.process.sessionCommands.filter((c) => c.includes(secret))).toEqual([]);
      expect(client.last.process.sessionCommands.some((c) => c.includes(Buffer.from(secret).toString("base64")))).toBe(
        false,
      );
    });
    // Closed: the directory goes with the session, whatever happens to the sandbox.
    expect(dir).not.toBe("");
    expect(existsSync(dir)).toBe(false);
  });

  it("fetches the output copy only for output that is not UTF-8, and removes the copies", async () => {
    const client = new FakeDaytona();
    // Per-command SDK use: the plain path's (a fast call is a line on the helper's stdin).
    await withDaytona(client, { fastPath: false }, async (env) => {
      expect((await env.execute("echo plain")).output).toBe("plain\n");
      expect(client.last.fs.calls.filter((c) => c.startsWith("downloadFile"))).toEqual([]);
      expect((await env.execute("printf 'ok\\377\\376\\n'")).output).toBe("[binary output, 5 bytes]");
      const downloads = client.last.fs.calls.filter((c) => c.startsWith("downloadFile"));
      expect(downloads).toHaveLength(1);
      await env.execute("true");
      expect(existsSync(downloads[0]!.slice("downloadFile ".length))).toBe(false);
    });
  });

  it("fetches stderr's own copy for stderr kept apart that is not UTF-8, and removes it", async () => {
    const client = new FakeDaytona();
    await withDaytona(client, { fastPath: false }, async (env) => {
      const r = await env.execute("echo out; printf 'e\\377\\376\\n' >&2; echo err >&2", { separateStreams: true });
      expect(r).toMatchObject({ stdout: "out\n", exitCode: 0 });
      expect(Buffer.from(r.stderr!)).toEqual(Buffer.from("e\ufffd\ufffd\nerr\n"));
      // stderr's copy only (stdout was UTF-8): once, or again when more of it came after a fetch (a loaded machine
      // hands the logs over in more pieces).
      const downloads = new Set(client.last.fs.calls.filter((c) => c.startsWith("downloadFile")));
      expect([...downloads]).toEqual([expect.stringMatching(/\.err$/)]);
      await env.execute("true");
      expect(existsSync([...downloads][0]!.slice("downloadFile ".length))).toBe(false);
    });
  });

  it("keeps output that is not UTF-8 when its logs arrive after the exit code (issue 22.16)", async () => {
    const client = new FakeDaytona();
    await withDaytona(client, { fastPath: false }, async (env) => {
      // The U+FFFD shows only after the exit: the copy was once never fetched, and the reply (marker too) held forever.
      client.last.process.logDelayMs = 600;
      expect(await env.execute("printf 'ok\\377\\376\\n'")).toMatchObject({
        exitCode: 0,
        output: "[binary output, 5 bytes]",
      });
      expect((await env.execute("printf 'a\\377b\\n'")).output).toBe("a\uFFFDb\n");
      expect((await env.execute("echo after")).output).toBe("after\n");
    });
  });

  it("streams output that is not UTF-8 while the command still runs (a PTY program's screen)", async () => {
    // Held text once waited for the command's end: vim's screen never came through the stand-in.
    const client = new FakeDaytona();
    await withDaytona(client, { fastPath: false }, async (env) => {
      const flag = join(work, "streamed-flag");
      let streamed = "";
      const result = await env.execute(`printf 'a\\377b\\n'; while [ ! -e ${flag} ]; do sleep 0.05; done; echo end`, {
        timeoutMs: 20_000,
        onOutput: (text) => {
          streamed += text;
          // The command ends only once its first line came through while it ran.
          if (streamed.includes("b\n")) writeFileSync(flag, "");
        },
      });
      expect(result).toMatchObject({ exitCode: 0, output: "a\uFFFDb\nend\n" });
    });
  });

  it("keeps fetching a running command's copy while tee lags, instead of garbling the rest of its output", async () => {
    // Under load tee once lagged past the copy's 3 s catch-up budget while the command still ran: the session gave
    // up on the copy and "[binary output]" came back as U+FFFD text.
    const client = new FakeDaytona();
    await withDaytona(client, { fastPath: false }, async (env) => {
      const flag = join(work, "lagging-flag");
      const downloads = (): number => client.last.fs.calls.filter((c) => c.startsWith("downloadFile")).length;
      client.last.fs.lag = { reads: 1_000, bytes: 1_000 };
      const call = env.execute(`printf 'ok\\377\\376\\n'; while [ ! -e ${flag} ]; do sleep 0.05; done`, {
        timeoutMs: 60_000,
      });
      // More fetches than the budget's backoff (25 ms doubling to 400 ms) makes before it gives up.
      await eventually(() => downloads() >= 16, "the lagging copy fetched again and again while the command runs");
      client.last.fs.lag = { reads: 0, bytes: 0 };
      writeFileSync(flag, "");
      expect(await call).toMatchObject({ exitCode: 0, output: "[binary output, 5 bytes]" });
    });
  });

  it("fetches the output copy again while it is behind the logs (tee still writing)", async () => {
    const client = new FakeDaytona();
    await withDaytona(client, { fastPath: false }, async (env) => {
      client.last.fs.lag = { reads: 2, bytes: 200 };
      expect((await env.execute("printf 'ok\\377\\376\\n'")).output).toBe("[binary output, 5 bytes]");
      expect(client.last.fs.lag.reads).toBe(0);
    });
  });

  it.for([false, true])(
    "leaves no zombie after 12 commands in a sandbox whose init does not reap (fastPath %s)",
    async (fastPath, context) => {
      const why = InitlessBox.unavailable();
      if (why !== undefined) context.skip(why);
      const client = new FakeDaytona({ initlessBox: true });
      await withDaytona(client, { fastPath }, async (env) => {
        const box = client.last.box!;
        for (let i = 0; i < 12; i++) {
          const result = await env.execute(i % 3 === 0 ? `printf 'n${i}\\377\\n'` : `echo n${i}; cd /tmp`, {
            ...(i % 4 === 1 ? { stdin: "in" } : {}),
          });
          expect(result.exitCode).toBe(0);
        }
        // Exact bytes still come through the copy.
        expect((await env.execute("printf 'ok\\377\\376\\n'")).output).toBe("[binary output, 5 bytes]");
        // What a call started for its output ends before the call does: nothing is left to be adopted.
        expect(box.zombies()).toEqual([]);
      });
    },
  );

  it("rejects bad options, naming the option and the value", async () => {
    const client = new FakeDaytona();
    await expect(createEnvironment({ backend: "daytona", client, image: "a", snapshot: "b" })).rejects.toThrow(
      /Pass image or snapshot, not both/,
    );
    await expect(createEnvironment({ backend: "daytona", client, onClose: "archive" } as never)).rejects.toThrow(
      /onClose must be "delete", "stop" or "keep", got "archive"/,
    );
    await expect(createEnvironment({ backend: "daytona", client, labels: { a: 1 } } as never)).rejects.toThrow(
      InvalidOptionError,
    );
    await expect(createEnvironment({ backend: "daytona", client, memoryGiB: 0.5 })).rejects.toThrow(
      /memoryGiB must be a positive integer, got 0.5/,
    );
  });
});

describe("the Daytona timeout backstop (the spec's open item 4)", () => {
  it("passes exit codes through, and when it fires the session stays consistent", async () => {
    const client = new FakeDaytona();
    // A negative margin makes the backstop fire before the session's own deadline.
    const transport = new DaytonaTransport({
      labels: {},
      env: {},
      onClose: "delete",
      client,
      serverTimeoutMarginMs: -2_500,
      startTimeoutSec: 60,
      warn: () => undefined,
    });
    const session = await Session.open(transport, {
      cwd: "~",
      timeoutMs: 4000,
      maxOutputBytes: 50_000,
      outputHeadFraction: 0.4,
      killGraceMs: 1000,
      initTimeoutMs: 30_000,
      warn: () => undefined,
    });
    try {
      expect((await session.execute(`export SW_SET=before; cd ${work}; exit 7`)).exitCode).toBe(7);
      expect(client.last.process.sessionCommands.at(-1)).toMatch(
        /^(rm -f [^;]*; )?(: > '[^']+'; )?\{ rm -f '[^']+'; exec timeout -k 5s 2s /,
      );
      const fired = await session.execute("echo started; sleep 30");
      // The backstop's own exit code (124) arrives as a normal exit, before the session's deadline.
      expect(fired).toMatchObject({ exitCode: 124, timedOut: false });
      expect(fired.output).toContain("started\n");
      const after = await session.execute("echo $SW_SET; pwd");
      expect(after).toMatchObject({ exitCode: 0, output: `before\n${work}\n` });
    } finally {
      await session.close();
    }
  });
});
