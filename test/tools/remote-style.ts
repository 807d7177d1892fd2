/**
 * Real bash on this machine, reached the way remote backends reach theirs:
 * stdin embedded in the script (heredoc), the cwd from the in-band marker, no
 * direct file access (the script moves its own dumps), the wrapper's PID
 * reported first. Not a fake: every command really runs; only the plumbing
 * differs from `local`. It lets the tools' tests cover remote code paths
 * before a remote backend has landed.
 */

import { LocalTransport } from "../../src/backends/local/transport.js";
import { Session } from "../../src/core/session.js";
import type { ProcessHandle, RunOptions, Transport, TreeKill } from "../../src/core/transport.js";
import { backendSelected, type CompatBackend } from "../compat/backends.js";

class RemoteStyleTransport implements Transport {
  readonly name = "remote-style";
  readonly stdinMode = "heredoc";
  readonly needsRemotePid = true;
  readonly #inner = new LocalTransport({ env: {} });

  get tempDir(): string {
    return this.#inner.tempDir;
  }
  start(): Promise<void> {
    return this.#inner.start();
  }
  runBash(script: string, options: RunOptions): ProcessHandle {
    if (options.stdin !== undefined) throw new Error("a heredoc transport never gets stdin on a pipe");
    return this.#inner.runBash(script, options);
  }
  async killTree(handle: ProcessHandle, kill: TreeKill): Promise<void> {
    const { signal, remotePid } = kill;
    // Kill where it runs, by the PID the wrapper reported (as docker/ssh do inside the backend).
    if (remotePid === undefined) {
      await this.#inner.killTree(handle, kill);
      return;
    }
    try {
      process.kill(-remotePid, signal === "TERM" ? "SIGTERM" : "SIGKILL");
    } catch {
      // gone
    }
  }
  stop(): Promise<void> {
    return this.#inner.stop();
  }
}

export const remoteStyleBackend: CompatBackend = {
  name: "remote-style",
  enabled: backendSelected("remote-style"),
  create: async (options = {}) =>
    Session.open(new RemoteStyleTransport(), {
      cwd: options.cwd ?? process.cwd(),
      timeoutMs: options.timeoutMs ?? 180_000,
      maxOutputBytes: 50_000,
      outputHeadFraction: 0.4,
      killGraceMs: options.killGraceMs ?? 1000,
      initTimeoutMs: options.initTimeoutMs ?? 30_000,
      warn: options.onWarning ?? (() => undefined),
    }),
};
