/**
 * The local backend dressed as a remote one, so the tool tests also cover the
 * session's remote code paths on any machine: stdin embedded in the script
 * (heredoc mode, as on Modal and Daytona), the cwd learned from the in-band
 * marker, and the snapshot moved into place by the script itself (no direct
 * file access). It runs real bash; only the transport's declared abilities
 * differ from the local backend.
 */

import { LocalTransport } from "../../src/backends/local.js";
import { Session } from "../../src/core/session.js";
import type { KillSignal, ProcessHandle, RunOptions, Transport } from "../../src/core/transport.js";
import type { Environment } from "../../src/index.js";

class RemoteLikeTransport implements Transport {
  readonly name = "local-as-remote";
  readonly stdinMode = "heredoc" as const;
  readonly cwdSource = "marker" as const;
  readonly #inner = new LocalTransport({ env: {} });

  get tempDir(): string {
    return this.#inner.tempDir;
  }
  start(): Promise<void> {
    return this.#inner.start();
  }
  runBash(script: string, options: RunOptions): ProcessHandle {
    if (options.stdin !== undefined) throw new Error("a heredoc-mode transport must never get stdin on the pipe");
    return this.#inner.runBash(script, options);
  }
  killTree(handle: ProcessHandle, signal: KillSignal): Promise<void> {
    return this.#inner.killTree(handle, signal);
  }
  stop(): Promise<void> {
    return this.#inner.stop();
  }
}

export function createRemoteLikeSession(): Promise<Environment> {
  return Session.open(new RemoteLikeTransport(), {
    cwd: process.cwd(),
    timeoutMs: 180_000,
    maxOutputChars: 50_000,
    outputHeadFraction: 0.4,
    killGraceMs: 1000,
    initTimeoutMs: 30_000,
    warn: (message) => {
      throw new Error(`unexpected warning: ${message}`);
    },
  });
}
