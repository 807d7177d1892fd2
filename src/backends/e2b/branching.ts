/**
 * The e2b backend's whole-sandbox checkpoints and fork, over E2B's own snapshots and fork (docs/branching.md):
 * a checkpoint is an E2B snapshot, a rollback a new sandbox created from it, a fork's children E2B's forks.
 * E2B keeps a sandbox's memory in both, so what this session ran there is still running in the copy: the
 * session's processes, found by its mark, end in a copy before it is used.
 */

import { SESSION_MARK } from "../../core/call-marks.js";
import { shellQuote } from "../../core/script.js";
import { sweepScript } from "../../core/sweep-script.js";
import { messageOf } from "../shared/error-message.js";
import { removeDirLine } from "../shared/sandbox-command.js";
import { CONTROL_TIMEOUT_MS, runToEnd, uploadPrivate } from "./commands.js";
import type { E2bSandbox } from "./sdk.js";

/** What a platform without E2B's snapshots or fork answers them with, said with what to do instead. */
export function withShellHint(error: unknown, what: string): Error {
  const message = messageOf(error);
  // Not a 404: that is also what a sandbox killed behind the session's back answers.
  if (!/\b501\b|not implemented|unsupported/i.test(message)) return error as Error;
  return new Error(
    `${message} (the platform does not ${what}: set checkpoints: "shell" to keep the shell state only)`,
    { cause: error },
  );
}

/**
 * Ends, in a copy of a sandbox, every process the session of `mark` had running when the copy was made, and
 * removes that session's private directory there (its stdin files and output copies).
 */
export async function endCopiedSession(sandbox: E2bSandbox, mark: string, privateDir: string): Promise<void> {
  const sweep = `${removeDirLine(privateDir)}\n${sweepScript({ marks: [`${SESSION_MARK}=${mark}`] }, "KILL", 0)}`;
  const result = await runToEnd(sandbox, `bash -c ${shellQuote(sweep)}`, CONTROL_TIMEOUT_MS);
  if (result.exitCode !== 0)
    throw new Error(`ending the copied processes exited ${result.exitCode}: ${result.output.trim().slice(0, 300)}`);
}

/** E2B's fork of `sandbox` into `count` started sandboxes; if any did not start, the others are killed and it fails. */
export async function forkSandboxes(sandbox: E2bSandbox, count: number, timeoutMs: number): Promise<E2bSandbox[]> {
  let results: (E2bSandbox | Error)[];
  try {
    results = await sandbox.fork({ count, timeoutMs });
  } catch (error) {
    throw withShellHint(error, "fork sandboxes");
  }
  const started = results.filter((result): result is E2bSandbox => !(result instanceof Error));
  const failed = results.find((result): result is Error => result instanceof Error);
  if (failed === undefined && started.length === count) return started;
  await Promise.allSettled(started.map((child) => child.kill()));
  throw failed ?? new Error(`E2B's fork gave ${started.length} sandboxes of ${count}`);
}

/** Writes `bytes` as `path` (mode 0600) through the sandbox's private directory: never readable by another user. */
export async function writePrivateFile(
  sandbox: E2bSandbox,
  privateDir: string,
  path: string,
  bytes: Uint8Array,
): Promise<void> {
  const upload = await uploadPrivate(sandbox, privateDir, bytes);
  const move = `chmod 600 -- ${shellQuote(upload)} && mv -f -- ${shellQuote(upload)} ${shellQuote(path)}`;
  const result = await runToEnd(sandbox, `bash -c ${shellQuote(move)}`, CONTROL_TIMEOUT_MS);
  if (result.exitCode !== 0)
    throw new Error(`writing ${path} exited ${result.exitCode}: ${result.output.trim().slice(0, 300)}`);
}
