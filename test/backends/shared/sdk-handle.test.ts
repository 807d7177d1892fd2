/**
 * The SDK ProcessHandle adapter and the in-backend tree kill, on their own:
 * the adapter with hand-driven SDK calls, the kill script with real bash on
 * this machine.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { describe, expect, it } from "vitest";
import { DEFAULT_GRACE_MS, parseKilled, RemoteTreeKiller } from "../../../src/backends/shared/remote-tree.js";
import { sweepScript } from "../../../src/core/sweep-script.js";
import { sdkProcessHandle, type OutputSink } from "../../../src/backends/shared/sdk-handle.js";
import { BackendUnavailableError } from "../../../src/index.js";
import { alive } from "../../helpers/processes.js";

async function collect(output: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of output) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe("sdkProcessHandle", () => {
  it("streams output pushed before the exit and resolves the exit code", async () => {
    let sink!: OutputSink;
    const exit = deferred<number>();
    const handle = sdkProcessHandle({
      backend: "test",
      run: (s) => {
        sink = s;
        return exit.promise;
      },
    });
    const text = collect(handle.output);
    sink.push("a");
    sink.push(Buffer.from("b"));
    sink.end();
    exit.resolve(3);
    expect(await handle.wait()).toBe(3);
    expect(await text).toBe("ab");
  });

  it("keeps the SDK's error message in a typed error and ends the output", async () => {
    const handle = sdkProcessHandle({
      backend: "test",
      run: async () => Promise.reject(new Error("quota exceeded for sandboxes")),
    });
    const error = await handle.wait().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect((error as Error).message).toBe("test exec failed: quota exceeded for sandboxes");
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect(await collect(handle.output)).toBe("");
  });

  it("calls cancel once from kill(), swallowing its errors, and reports the killed call as 137", async () => {
    const exit = deferred<number>();
    let cancels = 0;
    const handle = sdkProcessHandle({
      backend: "test",
      run: () => exit.promise,
      cancel: async () => {
        cancels++;
        throw new Error("cancel failed too");
      },
    });
    handle.kill();
    handle.kill();
    expect(cancels).toBe(1);
    expect(handle.cancelled).toBe(true);
    exit.reject(new Error("sandbox terminated"));
    expect(await handle.wait()).toBe(137);
  });

  it("survives a cancel that throws synchronously", () => {
    const handle = sdkProcessHandle({
      backend: "test",
      run: () => new Promise<number>(() => undefined),
      cancel: () => {
        throw new Error("boom");
      },
    });
    expect(() => handle.kill()).not.toThrow();
  });
});

/** Starts `bash -c script` and resolves once it printed "ready" (its tree is complete). */
async function startTree(script: string): Promise<ChildProcess> {
  const root = spawn("bash", ["-c", script], { stdio: ["ignore", "pipe", "ignore"] });
  await new Promise<void>((resolve, reject) => {
    let seen = "";
    root.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes("ready")) resolve();
    });
    root.once("exit", () => reject(new Error("the tree exited before it was ready")));
  });
  return root;
}

/** Runs the sweep script (TERM, then KILL after the grace) on the tree under `root`: its exit code and output. */
async function sweepTree(root: ChildProcess): Promise<{ exitCode: number | null; output: string }> {
  const run = spawn("bash", ["-c", sweepScript({ marks: [], root: root.pid! }, "TERM", DEFAULT_GRACE_MS)], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  let output = "";
  run.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exitCode = await new Promise<number | null>((resolve) => run.on("close", resolve));
  return { exitCode, output };
}

describe("the in-backend tree kill", () => {
  it("kills a process, its children and grandchildren, and says which", async () => {
    const root = await startTree("sleep 300 & (sleep 300 & sleep 300 & echo ready; wait) & wait");
    const { exitCode, output } = await sweepTree(root);
    expect(exitCode).toBe(0);
    const killed = parseKilled(output);
    expect(killed).toContain(root.pid);
    expect(killed.length).toBe(5); // root, subshell, three sleeps
    for (const pid of killed) expect(alive(pid), `pid ${pid}`).toBe(false);
  });

  it("follows TERM with KILL for what ignores TERM", async () => {
    const root = await startTree("trap '' TERM; sleep 300 & echo ready; wait");
    const killed = parseKilled((await sweepTree(root)).output);
    expect(killed.length).toBe(2);
    expect(killed).toContain(root.pid);
    // Both ignore TERM: that they are gone means the script went on to KILL.
    for (const pid of killed) expect(alive(pid), `pid ${pid}`).toBe(false);
  });

  it("refuses to guess without a PID, so the session can fall back", async () => {
    const killer = new RemoteTreeKiller("test", async () => ({ exitCode: 0, output: "" }));
    const handle = sdkProcessHandle({ backend: "test", run: () => new Promise<number>(() => undefined) });
    await expect(killer.kill(handle, "TERM", undefined)).rejects.toThrow(/has not reported its PID yet/);
  });

  it("reports a kill script that failed as an error", async () => {
    const killer = new RemoteTreeKiller("test", async () => ({ exitCode: 126, output: "bash: permission denied" }));
    const handle = sdkProcessHandle({ backend: "test", run: () => new Promise<number>(() => undefined) });
    await expect(killer.kill(handle, "KILL", 1234)).rejects.toThrow(/exited with 126: bash: permission denied/);
  });

  it("holds the guarded handle's exit until a kill in flight has finished", async () => {
    const killDone = deferred<{ exitCode: number; output: string }>();
    const killer = new RemoteTreeKiller("test", () => killDone.promise);
    const handle = killer.guard(sdkProcessHandle({ backend: "test", run: async () => 143 }));
    const killing = killer.kill(handle, "TERM", 4242);
    let exited = false;
    const waiting = handle.wait().then((code) => ((exited = true), code));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(exited).toBe(false);
    killDone.resolve({ exitCode: 0, output: "__shellwright_killed:4242\n" });
    await killing;
    expect(await waiting).toBe(143);
  });
});
