/**
 * A sandbox that ends (killed, or its timeout passed) drops its open envd
 * streams, as E2B's do when the machine goes away: the SDK then asks
 * /health, gets 502 and throws TimeoutError "… killed or reached its end of
 * life". A process killed on its own (SendSignal) still ends with its exit.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommandExitError, Sandbox, TimeoutError } from "e2b";
import { startTestGateway, TOKEN } from "../helpers.js";
import { alive, eventually } from "../../helpers/processes.js";

type Gateway = Awaited<ReturnType<typeof startTestGateway>>;
const END_OF_LIFE = "sandbox was killed or reached its end of life";

describe("a sandbox's end cuts its open streams", () => {
  let gateway: Gateway;
  const sdk = () => ({ apiKey: TOKEN, apiUrl: gateway.url, sandboxUrl: gateway.url });
  beforeAll(async () => {
    gateway = await startTestGateway({ apis: ["e2b"], cwd: "/tmp" });
  });
  afterAll(async () => {
    await gateway.close();
  });

  /** A background command that prints its pid, then sleeps in that same process. */
  async function sleeper(sandbox: Sandbox) {
    const handle = await sandbox.commands.run("echo $$; exec sleep 300", { background: true });
    await eventually(() => handle.stdout !== "", "the command's pid");
    return { handle, pid: Number(handle.stdout.trim()) };
  }

  it("kill: the command's wait throws the SDK's TimeoutError (a second connection's too), and the process is gone", async () => {
    const sandbox = await Sandbox.create(sdk());
    const { handle, pid } = await sleeper(sandbox);
    const joined = await sandbox.commands.connect(handle.pid);
    try {
      await sandbox.kill();
      for (const waited of [handle, joined]) {
        const error: unknown = await waited.wait().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TimeoutError);
        expect((error as Error).message).toContain(END_OF_LIFE);
      }
      await eventually(() => !alive(pid), "the sleep to end with its sandbox");
    } finally {
      if (alive(pid)) process.kill(pid, "SIGKILL");
    }
  });

  it("timeout: a sandbox whose time runs out drops its command's stream and its directory watch", async () => {
    const sandbox = await Sandbox.create(sdk());
    const { handle, pid } = await sleeper(sandbox);
    let watchError: Error | undefined;
    const watching = new Promise<void>((resolve) => {
      void sandbox.files.watchDir(".", () => undefined, {
        onExit: (error) => {
          watchError = error;
          resolve();
        },
      });
    });
    try {
      await sandbox.setTimeout(1000);
      const error: unknown = await handle.wait().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TimeoutError);
      expect((error as Error).message).toContain(END_OF_LIFE);
      await watching;
      expect(watchError).toBeInstanceOf(TimeoutError);
      expect(watchError?.message).toContain(END_OF_LIFE);
      await eventually(() => !alive(pid), "the sleep to end with its sandbox");
    } finally {
      if (alive(pid)) process.kill(pid, "SIGKILL");
    }
  });

  it("a command killed on its own still ends with its exit, and another sandbox's stream is left alone", async () => {
    const doomed = await Sandbox.create(sdk());
    const other = await Sandbox.create(sdk());
    const mine = await sleeper(other);
    const theirs = await sleeper(doomed);
    try {
      await doomed.kill();
      await expect(theirs.handle.wait()).rejects.toBeInstanceOf(TimeoutError);
      expect(alive(mine.pid)).toBe(true);
      expect(await mine.handle.kill()).toBe(true);
      const error: unknown = await mine.handle.wait().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CommandExitError);
      expect((error as CommandExitError).exitCode).toBe(-1);
      expect((error as Error).message).toContain("signal: killed");
      await eventually(() => !alive(mine.pid), "the killed sleep to be gone");
    } finally {
      for (const pid of [mine.pid, theirs.pid]) if (alive(pid)) process.kill(pid, "SIGKILL");
      await other.kill();
    }
  });
});
