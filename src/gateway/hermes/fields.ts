/**
 * The bodies of hermes' requests, validated once as they arrive: every
 * field hermes' client sends has its type checked (a 400 names the field and
 * the value), and a field it never sends is refused rather than silently
 * dropped.
 *
 * What a Shellwright session cannot honour is accepted and ignored, each
 * for a reason a hermes user would agree with (docs/gateway.md):
 * - `image`, `cpu`, `memoryMiB`, `diskMiB`: the gateway's configured backend
 *   decides what a session runs on (`shellwright serve --backend …`), not a
 *   request; Shellwright has no per-session resource knobs to map them to.
 * - `timeoutMs`, `idleTimeoutMs`: a session lives until terminated or idle
 *   for the gateway's own --idle-timeout-ms (30 min by default, longer than
 *   hermes' 5 min), never cut short mid-task by a lifetime.
 * - `persistentFilesystem`, `snapshotBeforeTerminate`: there is no image to
 *   snapshot; files live where the backend keeps them (the host's, for local).
 * - `logicalKey`: hermes' task id; the idempotency key already ties a retried
 *   create to its sandbox.
 */

import { InvalidOptionError } from "../../core/errors.js";
import { describe, shellString } from "../../core/options.js";
import { EXECUTION_ID } from "../../http/gateway-protocol.js";

export const IGNORED_CREATE_FIELDS = [
  "image",
  "cpu",
  "memoryMiB",
  "diskMiB",
  "timeoutMs",
  "idleTimeoutMs",
  "persistentFilesystem",
  "logicalKey",
] as const;

export interface CreateFields {
  /** The session's starting directory, as sent (the gateway's path policy checks it). */
  cwd: string | undefined;
  /** The fields sent that the sandbox ignores, in the order above. */
  ignored: string[];
  /** The body in a canonical form: a create retried with the same idempotency key must send the same one. */
  fingerprint: string;
}

export function createFields(body: Record<string, unknown>): CreateFields {
  refuseUnknown(body, ["cwd", ...IGNORED_CREATE_FIELDS], "sandbox");
  const cwd = body.cwd === undefined ? undefined : shellString("cwd", body.cwd);
  if (body.image !== undefined) shellString("image", body.image, { allowEmpty: true });
  if (body.logicalKey !== undefined) shellString("logicalKey", body.logicalKey, { allowEmpty: true });
  for (const field of ["cpu", "memoryMiB", "diskMiB", "timeoutMs", "idleTimeoutMs"]) positive(body, field);
  boolean(body, "persistentFilesystem");
  const ignored = IGNORED_CREATE_FIELDS.filter((field) => body[field] !== undefined);
  const fingerprint = JSON.stringify(
    Object.keys(body)
      .sort()
      .map((key) => [key, body[key]]),
  );
  return { cwd, ignored, fingerprint };
}

export interface ExecFields {
  execId: string;
  command: string;
  cwd: string | undefined;
  timeoutMs: number | undefined;
  stdinData: string | undefined;
}

export function execFields(body: Record<string, unknown>): ExecFields {
  refuseUnknown(body, ["execId", "command", "cwd", "timeoutMs", "stdinData"], "exec");
  if (typeof body.execId !== "string" || !EXECUTION_ID.test(body.execId))
    throw new InvalidOptionError(
      "execId",
      `execId must be 1–64 of A-Z a-z 0-9 _ - (hermes sends a UUID), got ${describe(body.execId)}`,
    );
  if (body.command === undefined)
    throw new InvalidOptionError("command", "command is required: the shell command to run");
  return {
    execId: body.execId,
    // An empty command is a no-op, as in `bash -c ''`.
    command: shellString("command", body.command, { allowEmpty: true }),
    cwd: body.cwd === undefined ? undefined : shellString("cwd", body.cwd),
    timeoutMs: positive(body, "timeoutMs"),
    // Any string: stdin may hold what a command line cannot (a NUL byte too).
    stdinData: body.stdinData === undefined ? undefined : text(body, "stdinData"),
  };
}

export function terminateFields(body: Record<string, unknown>): void {
  refuseUnknown(body, ["snapshotBeforeTerminate"], "terminate");
  boolean(body, "snapshotBeforeTerminate");
}

function refuseUnknown(body: Record<string, unknown>, known: readonly string[], what: string): void {
  for (const key of Object.keys(body))
    if (!known.includes(key))
      throw new InvalidOptionError(key, `Unknown ${what} field ${describe(key)}; known fields: ${known.join(", ")}`);
}

function positive(body: Record<string, unknown>, field: string): number | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0)
    throw new InvalidOptionError(field, `${field} must be a positive number, got ${describe(value)}`);
  return value;
}

function boolean(body: Record<string, unknown>, field: string): void {
  const value = body[field];
  if (value !== undefined && typeof value !== "boolean")
    throw new InvalidOptionError(field, `${field} must be true or false, got ${describe(value)}`);
}

function text(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== "string")
    throw new InvalidOptionError(field, `${field} must be a string, got ${describe(value)}`);
  return value;
}
