/** Short commands in an E2B sandbox, and the private files their stdin travels in. */

import { randomBytes } from "node:crypto";
import { shellQuote } from "../../core/script.js";
import { sandboxProbe, sandboxProbeResult, type SandboxProbe } from "../shared/sandbox-command.js";
import type { E2bSandbox } from "./sdk.js";

/**
 * A command's own limit on E2B (the SDK's `timeoutMs`): its stream's deadline, past which envd ends it. A day,
 * E2B's longest sandbox: the session's own timeouts end a call long before (the SDK's default is 60 s).
 */
export const NO_COMMAND_LIMIT_MS = 86_400_000;

/** The limit for a short command of the backend's own in the sandbox (a probe, a sweep, a file moved). */
export const CONTROL_TIMEOUT_MS = 30_000;

/** Runs a command to its end; its exit code and merged output (a non-zero exit is no error here). */
export async function runToEnd(
  sandbox: E2bSandbox,
  command: string,
  timeoutMs: number,
): Promise<{ exitCode: number; output: string }> {
  const chunks: string[] = [];
  const handle = await sandbox.commands.run(command, {
    background: true,
    timeoutMs,
    onStdout: (text) => void chunks.push(text),
    onStderr: (text) => void chunks.push(text),
  });
  return { exitCode: await exitCodeOf(handle), output: chunks.join("") };
}

/** What a command ended by a signal reports: envd says -1 ("signal: killed"); a shell says 128 + SIGKILL. */
const SIGNALLED_EXIT = 137;

/** The command's exit code: the SDK rejects a non-zero one as a CommandExitError, which carries it. */
export async function exitCodeOf(handle: { wait(): Promise<{ exitCode: number }> }): Promise<number> {
  try {
    return (await handle.wait()).exitCode;
  } catch (error) {
    const exitCode = (error as { exitCode?: unknown } | null)?.exitCode;
    if (typeof exitCode !== "number" || !Number.isInteger(exitCode)) throw error;
    return exitCode < 0 ? SIGNALLED_EXIT : exitCode;
  }
}

/** Writes stdin `bytes` to a new file in the session's private directory (mode 700, made at start); its path. */
export async function uploadPrivate(sandbox: E2bSandbox, dir: string, bytes: Uint8Array): Promise<string> {
  const path = `${dir}/in-${randomBytes(6).toString("hex")}`;
  await sandbox.files.write(path, arrayBufferOf(bytes));
  return path;
}

/** The bytes as an ArrayBuffer of their own (a Buffer's may be a view into a larger pool). */
export function arrayBufferOf(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** Makes the session's private directory in the sandbox, and learns whether the exact output copy is possible. */
export async function probeSandbox(sandbox: E2bSandbox, timeoutMs: number): Promise<SandboxProbe> {
  const probe = await runToEnd(sandbox, `bash -c ${shellQuote(sandboxProbe("e2b"))}`, timeoutMs);
  const { privateDir, hasTailPid } = sandboxProbeResult(probe.output);
  if (privateDir === undefined)
    throw new Error(`making a private directory exited ${probe.exitCode}: ${probe.output.trim().slice(0, 300)}`);
  return { privateDir, hasTailPid };
}
