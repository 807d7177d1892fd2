/**
 * The Modal adapter against a FAKE Modal client (test/fakes/fake-modal.ts)
 * that runs each exec on this machine: Modal's cloud cannot be reached here.
 * What the whole compat suite cannot show: how a timeout is delivered, the
 * last-resort terminate and the new sandbox after it, SDK errors, image
 * resolution (PR 4511) and the SDK calls' parameters.
 */

import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ADD_PYTHON_COMMANDS, resolveModalImage } from "../../../src/backends/modal/transport.js";
import {
  BackendUnavailableError,
  createEnvironment,
  InvalidOptionError,
  type Environment,
} from "../../../src/index.js";
import type { Session } from "../../../src/core/session.js";
import { FakeModalClient } from "../../fakes/fake-modal.js";
import { noStaticHelper, skipUnless } from "../../helpers/native-helper.js";

const work = mkdtempSync(join(tmpdir(), "sw-modal-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function withModal<T>(
  fn: (env: Environment, client: FakeModalClient) => Promise<T>,
  config: Record<string, unknown> = {},
): Promise<T> {
  const client = new FakeModalClient();
  const env = await createEnvironment({ backend: "modal", client, ...config });
  try {
    return await fn(env, client);
  } finally {
    await env.close();
  }
}

const isKillScript = (argv: string[]): boolean =>
  argv[0] === "bash" && argv[1] === "-c" && argv[2]!.includes("__shellwright_killed");

describe("modal backend (fake SDK client)", () => {
  it("keeps output that arrives after the exit is reported (two channels: nothing orders them)", async () => {
    await withModal(
      async (env, client) => {
        // Later than the session's drain after an exit once was (250 ms): the whole reply, marker included, lost.
        client.last.outputDelayMs = 600;
        expect(await env.execute("echo first; printf last")).toMatchObject({ exitCode: 0, output: "first\nlast" });
        expect(await env.execute("export LATE=kept; exit 3")).toMatchObject({ exitCode: 3 });
        expect((await env.execute("echo $LATE")).output).toBe("kept\n");
      },
      { fastPath: false },
    );
  });

  it("creates one sandbox with the configured image, resources, lifetime and env", async () => {
    await withModal(
      async (env, client) => {
        expect(client.appLookups).toEqual([{ name: "my-app", params: { createIfMissing: true } }]);
        expect(client.sandboxesCreated).toHaveLength(1);
        const sandbox = client.last;
        expect(sandbox.image.tag).toBe("ubuntu:24.04");
        expect(sandbox.image.commands).toEqual(ADD_PYTHON_COMMANDS);
        expect(sandbox.params).toMatchObject({
          cpu: 2,
          memoryMiB: 4096,
          timeoutMs: 600_000,
          idleTimeoutMs: 120_000,
          env: { SW_TOKEN: "t0k3n" },
        });
        expect((await env.execute("echo $SW_TOKEN")).output).toBe("t0k3n\n");
        // Secrets travel in the creation request, never in an exec's argv.
        for (const exec of sandbox.execs) expect(exec.argv.join(" ")).not.toContain("t0k3n");
        await env.close();
        expect(sandbox.terminateCalls).toBe(1);
      },
      {
        image: "ubuntu:24.04",
        appName: "my-app",
        cpus: 2,
        memoryMiB: 4096,
        lifetimeMs: 600_000,
        idleTimeoutMs: 120_000,
        env: { SW_TOKEN: "t0k3n" },
      },
    );
  });

  it("still takes the deprecated cpu, with one warning, and refuses it beside cpus", async () => {
    const warnings: string[] = [];
    await withModal(
      async (_env, client) => {
        expect(client.last.params).toMatchObject({ cpu: 1.5 });
      },
      { cpu: 1.5, onWarning: (message: string) => warnings.push(message) },
    );
    expect(warnings).toEqual([expect.stringMatching(/^cpu is deprecated; use cpus/)]);
    const both = createEnvironment({ backend: "modal", client: new FakeModalClient(), cpus: 2, cpu: 2 });
    await expect(both).rejects.toThrow(InvalidOptionError);
    await expect(both).rejects.toThrow(/Pass cpus or cpu, not both/);
  });

  it("kills a timed-out command inside the sandbox, keeps the partial output and the sandbox", async () => {
    await withModal(async (env, client) => {
      const pidFile = join(work, "modal-sleeper");
      const r = await env.execute(`echo before; sleep 300 & echo $! > ${pidFile}; wait`, { timeoutMs: 1000 });
      expect(r).toMatchObject({ exitCode: 124, timedOut: true, output: "before\n\n[Command timed out after 1s]" });
      const sandbox = client.last;
      expect(sandbox.execs.filter((e) => isKillScript(e.argv)).length).toBeGreaterThanOrEqual(1);
      expect(sandbox.terminateCalls).toBe(0);
      expect(client.sandboxesCreated).toHaveLength(1);
      const gone = await env.execute(
        `p=$(cat ${pidFile}); [ -e /proc/$p ] && ! grep -q ') Z' /proc/$p/stat && echo alive || echo gone`,
      );
      expect(gone.output).toBe("gone\n");
    });
  });

  it("gives the exec a server-side timeout past the session's own deadline, within the sandbox's lifetime", async () => {
    await withModal(
      async (env, client) => {
        await env.execute("true", { timeoutMs: 5000 });
        expect(client.last.execs.at(-1)!.params).toMatchObject({ mode: "binary", timeoutMs: 35_000 });
        await env.execute("true", { timeoutMs: 2 ** 31 - 1 });
        expect(client.last.execs.at(-1)!.params).toMatchObject({ mode: "binary", timeoutMs: 600_000 });
      },
      // Per-exec parameters: the plain path's (a fast call is no exec of its own).
      { lifetimeMs: 600_000, fastPath: false },
    );
  });

  it("kills an interrupted command whose PID has not come yet by its mark, and keeps the sandbox", async () => {
    // Its output is late (a slow stream, or the interrupt came the moment it started): the tree kill has no PID.
    // The last resort used to terminate the sandbox, with every other process and file of the session.
    await withModal(
      async (env, client) => {
        const keeper = join(work, "modal-keeper");
        const victim = join(work, "modal-victim");
        await env.execute(`export KEPT=1; sleep 302 > /dev/null 2>&1 & echo $! > ${keeper}`);
        client.last.outputDelayMs = 600;
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 200);
        const r = await env.execute(`echo late; sleep 301 & echo $! > ${victim}; wait`, { signal: controller.signal });
        expect(r).toMatchObject({ exitCode: 130, interrupted: true });
        client.last.outputDelayMs = 0;
        expect(client.last.terminateCalls).toBe(0);
        expect(client.sandboxesCreated).toHaveLength(1);
        const alive = (file: string): string =>
          `p=$(cat ${file}); [ -e /proc/$p ] && ! grep -q ') Z' /proc/$p/stat && echo alive || echo gone`;
        expect((await env.execute(`${alive(victim)}; ${alive(keeper)}; echo $KEPT`)).output).toBe("gone\nalive\n1\n");
        await env.execute(`kill $(cat ${keeper})`);
      },
      { fastPath: false },
    );
  });

  it("terminates the sandbox only when the in-sandbox kill fails, and the next command gets a new sandbox", async () => {
    // The plain path's last resort; a fast call is killed by the helper in the sandbox instead.
    await withModal(
      async (env, client) => {
        await env.execute("export KEPT=1");
        const first = client.last;
        first.failExec = (argv) =>
          isKillScript(argv) ? new Error("deadline exceeded talking to the command router") : undefined;
        const r = await env.execute("echo partial; sleep 300", { timeoutMs: 800 });
        expect(r).toMatchObject({ exitCode: 124, timedOut: true, output: "partial\n\n[Command timed out after 0.8s]" });
        expect(first.terminateCalls).toBe(1);
        const next = await env.execute("echo back");
        expect(next).toMatchObject({ exitCode: 0 });
        expect(next.output).toContain("back\n");
        expect(client.sandboxesCreated).toHaveLength(2);
        expect(client.last.terminated).toBe(false);
      },
      { fastPath: false },
    );
  });

  it("keeps the SDK's error message in a typed error, and the session stays usable", async () => {
    // A failing exec: the plain path's (a fast call is no exec of its own).
    await withModal(
      async (env, client) => {
        client.last.failExec = (argv) =>
          argv.includes("-c") && !isKillScript(argv) ? new Error("UNAVAILABLE: connection reset by peer") : undefined;
        const error = await env.execute("echo hi").catch((e: unknown) => e);
        expect(error).toBeInstanceOf(BackendUnavailableError);
        expect((error as Error).message).toBe("modal exec failed: UNAVAILABLE: connection reset by peer");
        client.last.failExec = undefined;
        expect((await env.execute("echo hi")).output).toBe("hi\n");
      },
      { fastPath: false },
    );
  });

  it("streams output as it arrives", async () => {
    await withModal(async (env) => {
      const flag = join(work, "modal-stream-flag");
      // The command waits until the caller has seen its first line: without streaming it would time out.
      const r = await env.execute(`echo first; while [ ! -e ${flag} ]; do sleep 0.05; done; echo second`, {
        timeoutMs: 20_000,
        onOutput: (text) => {
          if (text.includes("first")) writeFileSync(flag, "");
        },
      });
      expect(r).toMatchObject({ timedOut: false, exitCode: 0, output: "first\nsecond\n" });
    });
  });

  it("sends a script over Modal's 64 KiB argv cap and a large stdin through the exec's stdin, byte-exact", async () => {
    await withModal(async (env, client) => {
      const big = "y".repeat(100_000);
      const stdin = Buffer.alloc(1 << 20, 0);
      for (let i = 0; i < stdin.length; i++) stdin[i] = (i * 7 + 3) % 256;
      const r = await env.execute(`v='${big}'; echo \${#v}; sha256sum | cut -c1-64`, { stdin });
      const { createHash } = await import("node:crypto");
      expect(r).toMatchObject({ exitCode: 0, output: `100000\n${createHash("sha256").update(stdin).digest("hex")}\n` });
      for (const exec of client.last.execs)
        expect(exec.argv.reduce((n, a) => n + Buffer.byteLength(a) + 1, 0)).toBeLessThanOrEqual(65_536);
    });
  });

  it("copies its fast-path helper once per sandbox, a rollback's new sandbox getting its own; close removes it", async (context) => {
    skipUnless(context, noStaticHelper);
    let copy = "";
    await withModal(async (env, client) => {
      const session = env as Session;
      const first = client.last;
      const path = await session.helperPath();
      // One rollback (they are slow on this fake): it starts a new sandbox, and the fast path afresh in it.
      await session.rollback(await session.checkpoint());
      expect(client.last).not.toBe(first);
      await session.execute("true");
      expect(await session.whenFastPathReady()).toBe(true);
      copy = await session.helperPath();
      // Every copy and start of the helper names its directory in the exec's argv (the fake runs it on this machine).
      const named = (sandbox: typeof first): string[] => [
        ...new Set(
          sandbox.execs
            .flatMap((exec) => exec.argv.filter((arg) => /shellwright-swmux-/.test(arg)))
            .map((arg) => /^.*shellwright-swmux-[0-9a-f]+/.exec(arg)![0]),
        ),
      ];
      expect(named(first)).toEqual([dirname(path)]);
      expect(named(client.last)).toEqual([dirname(copy)]);
      expect(existsSync(copy)).toBe(true);
    });
    // (The first sandbox's copy went with that sandbox on Modal; this fake shares the machine's /tmp.)
    expect(existsSync(dirname(copy))).toBe(false);
  });

  it("reports a sandbox that cannot be created with the SDK's message", async () => {
    const client = new FakeModalClient();
    client.failCreate = new Error("Image build for im-123 failed");
    const error = await createEnvironment({ backend: "modal", client }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect((error as Error).message).toBe(
      "Could not create a Modal sandbox from debian:bookworm-slim: Image build for im-123 failed",
    );
  });

  it("rejects bad options, naming the option and the value", async () => {
    await expect(
      createEnvironment({ backend: "modal", client: new FakeModalClient(), addPython: "yes" } as never),
    ).rejects.toThrow(/addPython must be true, false or "auto", got "yes"/);
    await expect(createEnvironment({ backend: "modal", client: new FakeModalClient(), memoryMiB: 0 })).rejects.toThrow(
      InvalidOptionError,
    );
    await expect(createEnvironment({ backend: "modal", client: {} as never })).rejects.toThrow(
      /client must be an SDK client with `apps`/,
    );
    await expect(
      createEnvironment({ backend: "modal", client: new FakeModalClient(), timeout: 5 } as never),
    ).rejects.toThrow(/Unknown modal backend option "timeout"/);
  });
});

const layers = (spec: ReturnType<typeof resolveModalImage>): string[] | undefined =>
  spec.kind === "registry" ? spec.dockerfileCommands : undefined;

describe("resolveModalImage (PR 4511)", () => {
  it("adds Python to ubuntu and debian registry images only", () => {
    expect(resolveModalImage("ubuntu:22.04", "auto")).toEqual({
      kind: "registry",
      tag: "ubuntu:22.04",
      dockerfileCommands: ADD_PYTHON_COMMANDS,
    });
    expect(layers(resolveModalImage("docker.io/library/debian:bookworm-slim", "auto"))).toEqual(ADD_PYTHON_COMMANDS);
    expect(layers(resolveModalImage("python:3.12-slim", "auto"))).toEqual([]);
    expect(layers(resolveModalImage("nikolaik/python-nodejs:python3.11-nodejs20", "auto"))).toEqual([]);
    expect(layers(resolveModalImage("myorg/debianish-tools:1", "auto"))).toEqual([]);
    expect(layers(resolveModalImage("alpine:3", true))).toEqual(ADD_PYTHON_COMMANDS);
    expect(layers(resolveModalImage("ubuntu:22.04", false))).toEqual([]);
  });

  it("takes im-… as a Modal image id, used as is", () => {
    expect(resolveModalImage("im-AbC123", "auto")).toEqual({ kind: "id", imageId: "im-AbC123" });
  });

  it("creates the sandbox from an image id through images.fromId, without added layers", async () => {
    await withModal(
      async (_env, client) => {
        expect(client.last.image).toMatchObject({ tag: "im-prebuilt1", commands: [] });
      },
      { image: "im-prebuilt1" },
    );
  });
});
