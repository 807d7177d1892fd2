/**
 * The e2b backend through E2B's real SDK over real loopback HTTP against
 * Shellwright's own E2B API (the gateway with `apis: ["e2b"]` on the local
 * backend: the sandbox's processes and files are this machine's, so a test
 * checks them in /proc and the filesystem). What the compat suite cannot
 * show: what a new sandbox gets, one connected to and kept,
 * stdin on the plain path, a sandbox killed behind the session's back, the
 * timeout renewal and portUrl.
 */

import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox, type SandboxOpts } from "e2b";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { E2bTransport } from "../../../src/backends/e2b/transport.js";
import { normalizeE2bConfig } from "../../../src/backends/e2b/config.js";
import { sessionOptions, type CommonConfig } from "../../../src/backends/shared/config.js";
import { Session } from "../../../src/core/session.js";
import {
  BackendUnavailableError,
  createEnvironment,
  portUrl,
  UnsupportedError,
  type Environment,
  type Gateway,
} from "../../../src/index.js";
import { startTestGateway, TOKEN } from "../../gateway/helpers.js";
import { killAll, pidsWithArgv } from "../../helpers/proc-scan.js";
import { eventually } from "../../helpers/processes.js";
import { useScratchDir } from "../../helpers/scratch.js";

let gateway: Gateway;
let connection: { apiKey: string; apiUrl: string; sandboxUrl: string };
let sdk: SandboxOpts;
const scratch = useScratchDir("sw-e2b-test-");
/** Processes a test started, ended by pid if a failing test left them. */
const started = new Set<number>();

beforeAll(async () => {
  gateway = await startTestGateway({ apis: ["e2b"], cwd: "/tmp" });
  connection = { apiKey: TOKEN, apiUrl: gateway.url, sandboxUrl: gateway.url };
  sdk = { ...connection, requestTimeoutMs: 30_000 };
});
afterAll(async () => {
  killAll(started);
  await gateway?.close();
});

/** A session through the public door. */
async function openE2b(config: Record<string, unknown>): Promise<Environment> {
  return createEnvironment({ backend: "e2b", ...connection, ...config } as never);
}

/** A session and its transport (whose sandboxId the public API does not show). */
async function openWithTransport(config: Record<string, unknown>): Promise<{ env: Session; transport: E2bTransport }> {
  const raw = { backend: "e2b", ...connection, ...config };
  const transport = new E2bTransport(normalizeE2bConfig(raw, () => undefined));
  return { env: await Session.open(transport, sessionOptions(raw as CommonConfig, "~")), transport };
}

/** Every process's command line, NULs as spaces. */
function commandLines(): string[] {
  const lines: string[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      lines.push(readFileSync(`/proc/${name}/cmdline`, "latin1").replaceAll("\0", " "));
    } catch {
      // gone meanwhile
    }
  }
  return lines;
}

/**
 * Runs `command` in the session until it touched a file, then runs `whileRunning`, then lets it finish: a check
 * made while the call is surely running, with no sleep.
 */
async function whileRunning<T>(
  env: Environment,
  command: string,
  whileRunning: () => T | Promise<T>,
  options: { stdin?: Uint8Array | string } = {},
): Promise<{ seen: T; output: string }> {
  const tag = randomBytes(4).toString("hex");
  const ready = join(scratch.path, `ready-${tag}`);
  const go = join(scratch.path, `go-${tag}`);
  const call = env.execute(`${command}; touch ${ready}; while [ ! -e ${go} ]; do sleep 0.02; done`, options);
  await eventually(() => existsSync(ready), "the command to run");
  const seen = await whileRunning();
  writeFileSync(go, "");
  const result = await call;
  expect(result.exitCode).toBe(0);
  return { seen, output: result.output };
}

/**
 * The session's private directory, read off the command line of a plain-path call (its output copy is there):
 * the one whose call carries this probe's own tag, since other sessions may be running calls too.
 */
async function privateDirOf(env: Environment): Promise<string> {
  const tag = `dir-probe-${randomBytes(6).toString("hex")}`;
  const { seen } = await whileRunning(env, `: ${tag}`, () =>
    commandLines()
      .filter((line) => line.includes(tag))
      .map((line) => /\/tmp\/shellwright-e2b-[A-Za-z0-9]{8}(?=\/)/.exec(line)?.[0])
      .filter((dir): dir is string => dir !== undefined),
  );
  expect(new Set(seen).size).toBe(1);
  return seen[0]!;
}

/** A `sleep` argument no other test uses: its process is found by its exact argv. */
const uniqueSleep = (): string => String(7_000_000 + Math.floor(Math.random() * 1_000_000));

describe.each([true, false])("a created sandbox (fastPath %s)", (fastPath) => {
  it("gets the template, metadata and env; the env is on no command line; close kills it and its processes", async () => {
    const run = randomBytes(6).toString("hex");
    const secret = `s3cret-${randomBytes(8).toString("hex")}`;
    const env = (await openE2b({
      fastPath,
      template: "base",
      metadata: { run },
      env: { SW_E2B_SECRET: secret },
    })) as Session;
    let id: string;
    let dir: string | undefined;
    try {
      expect(await env.whenFastPathReady()).toBe(fastPath);
      const listed = await Sandbox.list({ ...sdk, query: { metadata: { run } } }).nextItems();
      expect(listed).toHaveLength(1);
      id = listed[0]!.sandboxId;
      const info = await Sandbox.getInfo(id, sdk);
      expect(info).toMatchObject({ templateId: "base", metadata: { run }, state: "running" });
      expect(gateway.registry.list().map((s) => s.id)).toContain(id);
      // On a platform whose sandbox is a host that stays (this one), the kill does not take the session's files.
      dir = fastPath ? undefined : await privateDirOf(env);

      // While a command that reads the variable runs, no process has the value on its command line.
      const { seen, output } = await whileRunning(env, 'echo "[$SW_E2B_SECRET]"', () =>
        commandLines().filter((line) => line.includes(secret)),
      );
      expect(output).toContain(`[${secret}]`);
      expect(seen).toEqual([]);

      // A process that leaves the call's group and session: the sandbox's kill still takes it.
      const arg = uniqueSleep();
      await env.execute(`setsid sleep ${arg} </dev/null >/dev/null 2>&1 &`);
      await eventually(() => pidsWithArgv("sleep", arg).length === 1, "the detached sleep");
      const [pid] = pidsWithArgv("sleep", arg);
      started.add(pid!);
      await env.close();
      await eventually(() => pidsWithArgv("sleep", arg).length === 0, `sleep ${arg} (pid ${pid}) to be gone`);
    } finally {
      await env.close();
    }
    expect(gateway.registry.list().map((s) => s.id)).not.toContain(id);
    if (dir !== undefined) expect(existsSync(dir)).toBe(false);
    await expect(Sandbox.getInfo(id, sdk)).rejects.toThrow(/not found/);
    expect(await Sandbox.list({ ...sdk, query: { metadata: { run } } }).nextItems()).toEqual([]);
  });

  it("says a sandbox killed behind its back is no longer running", async () => {
    const { env, transport } = await openWithTransport({ fastPath });
    try {
      expect((await env.execute("echo up")).output).toBe("up\n");
      expect(await env.whenFastPathReady()).toBe(fastPath);
      const id = transport.sandboxId!;
      expect(await Sandbox.kill(id, sdk)).toBe(true);
      const error = await env.execute("echo after").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackendUnavailableError);
      expect((error as Error).message).toMatch(new RegExp(`E2B sandbox ${id} is no longer running`));
    } finally {
      await env.close().catch(() => undefined);
    }
  });

  // On the fast path such a call ends with 137 and the next call says why (the fast path's runner decides).
  it.skipIf(fastPath)("says so to a call that was running when the sandbox was killed", async () => {
    const { env, transport } = await openWithTransport({ fastPath });
    try {
      expect(await env.whenFastPathReady()).toBe(fastPath);
      const ready = join(scratch.path, `ready-${randomBytes(4).toString("hex")}`);
      const call = env.execute(`touch ${ready}; exec sleep ${uniqueSleep()}`).catch((e: unknown) => e);
      await eventually(() => existsSync(ready), "the call to run");
      const id = transport.sandboxId!;
      expect(await Sandbox.kill(id, sdk)).toBe(true);
      const error = await call;
      expect(error).toBeInstanceOf(BackendUnavailableError);
      expect((error as Error).message).toMatch(new RegExp(`E2B sandbox ${id} is no longer running`));
    } finally {
      await env.close().catch(() => undefined);
    }
  });
});

describe("a close while the sandbox is still being made", () => {
  it("kills the sandbox once it is made, and the start says the backend was stopped", async () => {
    const run = randomBytes(6).toString("hex");
    const raw = { backend: "e2b", ...connection, metadata: { run } };
    const transport = new E2bTransport(normalizeE2bConfig(raw, () => undefined));
    const starting = transport.start().catch((e: unknown) => e);
    await transport.stop();
    const error = await starting;
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect((error as Error).message).toMatch(/stopped/);
    expect(transport.sandboxId).toBeUndefined();
    expect(await Sandbox.list({ ...sdk, query: { metadata: { run } } }).nextItems()).toEqual([]);
  });

  it("keeps a sandbox connected to by id, and starts nothing in it after", async () => {
    const sandbox = await Sandbox.create(sdk);
    try {
      const transport = new E2bTransport(
        normalizeE2bConfig({ backend: "e2b", ...connection, sandboxId: sandbox.sandboxId }, () => undefined),
      );
      const starting = transport.start().catch((e: unknown) => e);
      await transport.stop();
      expect(await starting).toBeInstanceOf(BackendUnavailableError);
      expect(await sandbox.isRunning()).toBe(true);
      await expect(transport.beforeExecute()).rejects.toThrow(/stopped/);
    } finally {
      await sandbox.kill();
    }
  });
});

describe("a close while the fast path copies its helper in", () => {
  it("leaves no private directory behind, nor the directory an overtaken upload would make again", async () => {
    // The helper's copy (about 1 MB) goes up as a file of the private directory when the session starts: a close
    // right after open removes the directory while that upload may still be on its way, and E2B's write makes a
    // missing parent again.
    const ours = (): string[] => readdirSync(tmpdir()).filter((name) => /^shellwright-e2b-[A-Za-z0-9]{8}$/.test(name));
    const before = new Set(ours());
    for (let i = 0; i < 6; i++) {
      const env = await openE2b({ onClose: "keep" });
      if (i % 2 === 1) await env.execute("true");
      await env.close();
    }
    await eventually(() => ours().every((name) => before.has(name)), "every private directory to go");
  });
});

describe("an upload the close overtakes", () => {
  it("takes back the file and the private directory E2B's write made again", async () => {
    // The real SDK, its write held until the close has run (as a slow upload would be): the close's sweep
    // removes the private directory first, then the write lands and makes it again.
    let held: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => (held = resolve));
    let writing = false;
    let armed = false;
    const sdkClass = {
      create: async (template: string, opts: SandboxOpts) => {
        const sandbox = await Sandbox.create(template, opts);
        const write = sandbox.files.write.bind(sandbox.files) as (...args: unknown[]) => Promise<unknown>;
        (sandbox.files as { write: unknown }).write = async (...args: unknown[]) => {
          if (armed) {
            writing = true;
            await gate;
          }
          return write(...args);
        };
        return sandbox;
      },
      connect: (id: string, opts: SandboxOpts) => Sandbox.connect(id, opts),
      deleteSnapshot: (id: string, opts: SandboxOpts) => Sandbox.deleteSnapshot(id, opts),
    };
    const raw = { backend: "e2b", ...connection, fastPath: false, onClose: "keep" };
    const transport = new E2bTransport({ ...normalizeE2bConfig(raw, () => undefined), sdk: sdkClass });
    const env = await Session.open(transport, sessionOptions(raw as CommonConfig, "~"));
    const dir = await privateDirOf(env);
    armed = true;
    const call = env.execute("cat", { stdin: "held back" }).catch((error: unknown) => error);
    await eventually(() => writing, "the stdin's upload to start");
    await env.close();
    expect(existsSync(dir)).toBe(false);
    held!();
    await call;
    await eventually(() => !existsSync(dir), "the directory the late write made to go again");
  });
});

describe("a sandbox connected to by id", () => {
  it("is used, its session's private dir is 700 while open and gone at close, and the sandbox is kept", async () => {
    const sandbox = await Sandbox.create(sdk);
    try {
      const { env, transport } = await openWithTransport({ sandboxId: sandbox.sandboxId, fastPath: false });
      let dir: string;
      const arg = uniqueSleep();
      try {
        expect(transport.sandboxId).toBe(sandbox.sandboxId);
        dir = await privateDirOf(env);
        expect(statSync(dir).mode & 0o777).toBe(0o700);
        // The session's processes go at close, also in a sandbox that is kept.
        await env.execute(`setsid sleep ${arg} </dev/null >/dev/null 2>&1 &`);
        await eventually(() => pidsWithArgv("sleep", arg).length === 1, "the detached sleep");
        pidsWithArgv("sleep", arg).forEach((pid) => started.add(pid));
      } finally {
        await env.close();
      }
      expect(await sandbox.isRunning()).toBe(true);
      expect(existsSync(dir)).toBe(false);
      await eventually(() => pidsWithArgv("sleep", arg).length === 0, `sleep ${arg} to be gone`);
      expect((await sandbox.commands.run("echo still")).stdout).toBe("still\n");
    } finally {
      await sandbox.kill();
    }
  });

  it("whose tail takes no --pid (busybox) opens all the same, without the exact output copy", async () => {
    // A session sandbox keeps the function for the commands after it: the backend's probe meets this tail.
    const sandbox = await Sandbox.create({ ...sdk, metadata: { "shellwright:commands": "session" } });
    try {
      await sandbox.commands.run("tail() { return 1; }; export -f tail");
      expect((await sandbox.commands.run("bash -c 'tail --pid=1 /dev/null; echo $?'")).stdout).toBe("1\n");
      const env = await openE2b({ sandboxId: sandbox.sandboxId, fastPath: false });
      try {
        expect((await env.execute("echo works; exit 3")).output).toBe("works\n");
      } finally {
        await env.close();
      }
    } finally {
      await sandbox.kill();
    }
  });

  it("that does not exist fails the open, naming it", async () => {
    const before = gateway.registry.list().length;
    const error = await openE2b({ sandboxId: "no-such-sandbox" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect((error as Error).message).toMatch(/^Could not connect to E2B sandbox no-such-sandbox: .*not found/);
    expect(gateway.registry.list()).toHaveLength(before);
  });

  it('is killed at close with onClose "kill"', async () => {
    const sandbox = await Sandbox.create(sdk);
    try {
      const env = await openE2b({ sandboxId: sandbox.sandboxId, onClose: "kill" });
      expect((await env.execute("echo in")).output).toBe("in\n");
      await env.close();
      expect(await sandbox.isRunning()).toBe(false);
      expect(gateway.registry.list().map((s) => s.id)).not.toContain(sandbox.sandboxId);
    } finally {
      await sandbox.kill().catch(() => undefined);
    }
  });
});

describe("stdin on the plain path", () => {
  let env: Environment;
  let dir: string;
  beforeAll(async () => {
    env = await openE2b({ fastPath: false });
    dir = await privateDirOf(env);
  });
  afterAll(async () => env?.close());
  const stdinFiles = (): string[] => readdirSync(dir).filter((name) => name.startsWith("in-"));

  it("arrives byte for byte (NUL, 0xff, 100 KB) and leaves no file behind", async () => {
    const bytes = Buffer.concat([Buffer.from([0, 0xff, 0x0a, 0, 0xfe]), randomBytes(100_000), Buffer.from([0xff])]);
    const result = await env.execute('f=$(mktemp); cat > "$f"; sha256sum < "$f" | cut -c1-64; wc -c < "$f"; rm "$f"', {
      stdin: bytes,
    });
    expect(result.output).toBe(`${createHash("sha256").update(bytes).digest("hex")}\n${bytes.length}\n`);
    expect(stdinFiles()).toEqual([]);
  });

  it("is on no command line while the command runs", async () => {
    const marker = `stdin-marker-${randomBytes(8).toString("hex")}`;
    const { seen, output } = await whileRunning(
      env,
      'IFS= read -r line; echo "got:$line"',
      () => commandLines().filter((line) => line.includes(marker)),
      { stdin: `${marker}\n` },
    );
    expect(output).toContain(`got:${marker}`);
    expect(seen).toEqual([]);
    expect(stdinFiles()).toEqual([]);
  });

  it("leaves no file behind after a call that timed out", async () => {
    const result = await env.execute("cat >/dev/null; sleep 60", { stdin: randomBytes(50_000), timeoutMs: 1_000 });
    expect(result.timedOut).toBe(true);
    expect(stdinFiles()).toEqual([]);
    expect((await env.execute("echo next")).output).toBe("next\n");
  });
});

describe("the sandbox's timeout", () => {
  it("is renewed while the session is open and idle", async () => {
    const { env, transport } = await openWithTransport({ sandboxTimeoutMs: 10_000 });
    try {
      const id = transport.sandboxId!;
      const first = (await Sandbox.getInfo(id, sdk)).endAt.getTime();
      await eventually(
        async () => (await Sandbox.getInfo(id, sdk)).endAt.getTime() > first,
        "the sandbox's end to move later",
      );
      expect(await Sandbox.getInfo(id, sdk)).toMatchObject({ state: "running" });
    } finally {
      await env.close();
    }
  });
});

describe("a sandbox connected to by id, without sandboxTimeoutMs", () => {
  it("keeps the timeout it was given: the session neither sets nor renews it", async () => {
    const sandbox = await Sandbox.create({ ...sdk, timeoutMs: 3_600_000 });
    try {
      const given = (await sandbox.getInfo()).endAt.getTime();
      const { env } = await openWithTransport({ sandboxId: sandbox.sandboxId });
      try {
        expect((await env.execute("echo in")).output).toBe("in\n");
        // The default (5 minutes) set outright would have brought its end 55 minutes nearer.
        expect((await sandbox.getInfo()).endAt.getTime()).toBeGreaterThanOrEqual(given);
      } finally {
        await env.close();
      }
    } finally {
      await sandbox.kill();
    }
  });
});

describe("the renewal after close", () => {
  it("stops: a kept sandbox then ends when its timeout passes", async () => {
    const sandbox = await Sandbox.create(sdk);
    try {
      const { env } = await openWithTransport({ sandboxId: sandbox.sandboxId, sandboxTimeoutMs: 10_000 });
      try {
        const first = (await sandbox.getInfo()).endAt.getTime();
        // The first renewal sets the sandbox's timeout to the session's (10 s from then).
        await eventually(async () => (await sandbox.getInfo()).endAt.getTime() !== first, "a renewal");
      } finally {
        await env.close();
      }
      expect(await sandbox.isRunning()).toBe(true);
      // A renewal left running would keep it alive past the limit.
      await eventually(async () => !(await sandbox.isRunning()), "the kept sandbox to end at its timeout");
    } finally {
      await sandbox.kill().catch(() => undefined);
    }
  });
});

describe("portUrl", () => {
  it("is unsupported through sandboxUrl without a domain, naming sandboxUrl", async () => {
    const env = await openE2b({});
    try {
      const error = await portUrl(env, 8080).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnsupportedError);
      expect((error as UnsupportedError).code).toBe("UNSUPPORTED");
      expect((error as Error).message).toMatch(/port 8080.*sandboxUrl.*set domain/);
    } finally {
      await env.close();
    }
  });

  it("takes the domain from E2B_DOMAIN, as E2B's SDK does", async () => {
    vi.stubEnv("E2B_DOMAIN", "env.example.test");
    try {
      const { env, transport } = await openWithTransport({});
      try {
        expect((await portUrl(env, 3000)).url).toBe(`https://3000-${transport.sandboxId}.env.example.test`);
      } finally {
        await env.close();
      }
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("is E2B's proxy address (PORT-SANDBOX.domain) with a domain", async () => {
    const { env, transport } = await openWithTransport({ domain: "example.test" });
    try {
      expect(await portUrl(env, 8080)).toEqual({
        url: `https://8080-${transport.sandboxId}.example.test`,
        headers: {},
      });
    } finally {
      await env.close();
    }
  });
});
