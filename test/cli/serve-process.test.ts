/**
 * `shellwright serve` as a real process (the built dist/cli/serve.js): killed
 * with SIGKILL mid-command and started again, as a crash and a restart look to
 * a client; then stopped with SIGTERM.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BackendUnavailableError, createEnvironment, SessionClosedError } from "../../src/index.js";
import { scratchDir, TOKEN } from "../gateway/helpers.js";
import { alive, eventually } from "../helpers/processes.js";

const ENTRY = join(import.meta.dirname, "../../dist/cli/serve.js");

interface Served {
  child: ChildProcess;
  url: Promise<string>;
  exited: Promise<number | null>;
}

function startServe(args: string[]): Served {
  const child = spawn(process.execPath, [ENTRY, ...args], {
    env: { ...process.env, SHELLWRIGHT_GATEWAY_TOKEN: TOKEN },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) resolve(out.trim());
    });
    child.once("exit", (code) => reject(new Error(`serve exited with ${code} before listening`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, url, exited };
}

describe("shellwright serve, as a process", () => {
  const scratch = scratchDir();
  beforeAll(() => {
    if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run \`npm run build\` first`);
  });
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill("SIGKILL");
    scratch.remove();
  });

  it("a crash mid-command gives a clear error; after a restart the session is gone; SIGTERM stops it cleanly", async () => {
    const first = startServe(["--port", "0", "--allow-root", scratch.path]);
    children.push(first.child);
    const url = await first.url;
    const port = new URL(url).port;
    const env = await createEnvironment({ backend: "gateway", url, token: TOKEN, connectRetryMs: 300 });
    const pidFile = join(scratch.path, "sleeper");
    const running = env.execute(`sleep 20 & echo $! > ${pidFile}; wait`).catch((e: unknown) => e);
    await eventually(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "");

    first.child.kill("SIGKILL");
    const error = await running;
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect((error as Error).message).toContain("lost mid-request");
    // The SIGKILLed server's sessions end on their own: their owner watchdog kills what they left.
    const sleeper = Number(readFileSync(pidFile, "utf8"));
    try {
      await eventually(() => !alive(sleeper));
    } finally {
      if (alive(sleeper)) process.kill(sleeper, "SIGKILL"); // ours: started by this test
    }

    const second = startServe(["--port", port, "--allow-root", scratch.path]);
    children.push(second.child);
    expect(await second.url).toBe(url);
    await expect(env.execute("true")).rejects.toThrow(SessionClosedError);

    const fresh = await createEnvironment({ backend: "gateway", url, token: TOKEN });
    const pidFile2 = join(scratch.path, "sleeper2");
    const stopped = fresh.execute(`sleep 20 & echo $! > ${pidFile2}; wait`).catch((e: unknown) => e);
    await eventually(() => existsSync(pidFile2) && readFileSync(pidFile2, "utf8").trim() !== "");
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    const shutdown = await stopped;
    expect(shutdown).toBeInstanceOf(BackendUnavailableError);
    expect((shutdown as Error).message).toContain("shutting down");
    // A graceful stop ends the session's processes.
    await eventually(() => !alive(Number(readFileSync(pidFile2, "utf8"))));
  });
});
