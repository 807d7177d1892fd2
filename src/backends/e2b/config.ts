/**
 * The e2b backend's config: its public type, the option names it accepts
 * and their validation, in one place. Importing it never loads the `e2b`
 * SDK (the transport loads it at the first sandbox).
 */

import { InvalidOptionError } from "../../core/errors.js";
import {
  describe,
  describeSecret,
  optionalBoolean,
  plainObject,
  positiveNumber,
  rejectUnknown,
  stringRecord,
} from "../../core/options.js";
import { normalizeSyncConfig, type NormalizedSyncConfig, type SyncConfig } from "../../sync/options.js";
import { optionKeys, type CommonConfig, type PoolRefusal } from "../shared/config.js";
import type { E2bConnection, E2bSandbox, E2bSandboxClass } from "./sdk.js";

export interface E2bConfig extends CommonConfig {
  backend: "e2b";
  /** The template a new sandbox starts from. @default "base" */
  template?: string;
  /** Run in this existing sandbox (connected to, not created); it is kept at close unless `onClose` says "kill". */
  sandboxId?: string;
  /** Metadata of a new sandbox (E2B's `metadata`). */
  metadata?: Record<string, string>;
  /** The environment of a new sandbox (E2B's `envs`), set at creation: never on a command line. */
  env?: Record<string, string>;
  /**
   * How long E2B keeps the sandbox after Shellwright last renewed its timeout. The session renews it every half
   * of that while it is open, so the sandbox outlives a crashed process by at most this long. A sandbox connected
   * to by `sandboxId` keeps its own timeout unless this is given. @default 300000
   */
  sandboxTimeoutMs?: number;
  /** What close() does: "kill" the sandbox or "keep" it running. @default "keep" with sandboxId, else "kill" */
  onClose?: "kill" | "keep";
  /** E2B's API key. @default the E2B_API_KEY environment variable, as E2B's SDK reads it */
  apiKey?: string;
  /** The platform's domain. @default E2B_DOMAIN, or e2b.app */
  domain?: string;
  /** The control API's URL, for an E2B-compatible platform (a Shellwright `serve --api e2b`). @default E2B_API_URL */
  apiUrl?: string;
  /** The sandboxes' (envd's) URL, for an E2B-compatible platform. @default E2B_SANDBOX_URL */
  sandboxUrl?: string;
  /** Limit for creating or connecting to the sandbox. @default 120000 */
  startTimeoutMs?: number;
  /** Files and directories mirrored into the sandbox before commands (`files.write`). */
  sync?: SyncConfig;
  /** Run calls through the fast-path helper, one long-lived command (docs/fast-path.md); false: one command per call. @default true */
  fastPath?: boolean;
  /**
   * What a checkpoint and a fork hold (docs/branching.md): "sandbox", the whole sandbox through E2B's own
   * snapshots and fork; "shell", the shell state only, for a platform that has neither (a fork's child is then a
   * new sandbox from the template). @default "sandbox"
   */
  checkpoints?: "sandbox" | "shell";
}

/** The config as normalizeE2bConfig gives it to the transport. */
export interface E2bTransportOptions {
  template: string;
  sandboxId?: string | undefined;
  metadata: Record<string, string>;
  /** The sandbox's environment, set at creation (never on a command line). */
  env: Record<string, string>;
  sandboxTimeoutMs: number;
  /** Set the sandbox's timeout to sandboxTimeoutMs and renew it while the session is open. */
  renewTimeout: boolean;
  onClose: "kill" | "keep";
  connection: E2bConnection;
  sync?: NormalizedSyncConfig | undefined;
  fastPath?: boolean | undefined;
  /** What a checkpoint and a fork hold: the whole sandbox (E2B's snapshots and fork) or the shell state. */
  checkpoints: "sandbox" | "shell";
  /**
   * A fork's child: the sandbox E2B's fork started, adopted (killed at close unless kept), and the parent session's
   * mark, whose processes the fork's copy of memory still runs there: they end before the child's first call.
   */
  forked?: { sandbox: E2bSandbox; parentMark: string; parentDir: string } | undefined;
  warn: (message: string) => void;
  /** The SDK's Sandbox class; loaded from `e2b` at the first sandbox when absent. */
  sdk?: E2bSandboxClass | undefined;
}

export const E2B_KEYS = optionKeys<E2bConfig>()([
  "template",
  "sandboxId",
  "metadata",
  "env",
  "sandboxTimeoutMs",
  "onClose",
  "apiKey",
  "domain",
  "apiUrl",
  "sandboxUrl",
  "startTimeoutMs",
  "sync",
  "fastPath",
  "checkpoints",
]);

/** E2B keeps a sandbox 24 hours at most. */
const MAX_SANDBOX_TIMEOUT_MS = 86_400_000;
const MIN_SANDBOX_TIMEOUT_MS = 10_000;
/** E2B's sandbox ids, template names and ids: letters, digits, `-`, `_`, `.`, `:` and `/` (a team's template). */
const E2B_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/;

export function normalizeE2bConfig(raw: Record<string, unknown>, warn: (message: string) => void): E2bTransportOptions {
  rejectUnknown("e2b backend", raw, E2B_KEYS);
  const sandboxId = optionalName("sandboxId", raw.sandboxId);
  const existing = sandboxId !== undefined;
  const onCreate = { template: raw.template, metadata: raw.metadata, env: raw.env };
  for (const [key, value] of Object.entries(onCreate)) {
    if (existing && value !== undefined)
      throw new InvalidOptionError(
        key,
        `${key} is set when a sandbox is created, but sandboxId names one that exists (got ${key} ${key === "env" ? describeSecret(value) : describe(value)})`,
      );
  }
  const onClose = raw.onClose ?? (existing ? "keep" : "kill");
  if (onClose !== "kill" && onClose !== "keep")
    throw new InvalidOptionError("onClose", `onClose must be "kill" or "keep", got ${describe(onClose)}`);
  const sandboxTimeoutMs = positiveNumber("sandboxTimeoutMs", raw.sandboxTimeoutMs, 300_000);
  if (sandboxTimeoutMs < MIN_SANDBOX_TIMEOUT_MS || sandboxTimeoutMs > MAX_SANDBOX_TIMEOUT_MS)
    throw new InvalidOptionError(
      "sandboxTimeoutMs",
      `sandboxTimeoutMs must be between ${MIN_SANDBOX_TIMEOUT_MS} and ${MAX_SANDBOX_TIMEOUT_MS} ms (E2B's longest), got ${describe(raw.sandboxTimeoutMs)}`,
    );
  return {
    template: optionalName("template", raw.template) ?? "base",
    sandboxId,
    metadata: labels("metadata", raw.metadata),
    env: stringRecord("env", raw.env),
    sandboxTimeoutMs: Math.round(sandboxTimeoutMs),
    // A sandbox of someone else's keeps the timeout it was given, unless asked: a renewal sets it outright.
    renewTimeout: !existing || raw.sandboxTimeoutMs !== undefined,
    onClose,
    connection: connection(raw, positiveNumber("startTimeoutMs", raw.startTimeoutMs, 120_000)),
    sync: normalizeSyncConfig("sync", raw.sync),
    fastPath: optionalBoolean("fastPath", raw.fastPath),
    checkpoints: checkpointsOption(raw.checkpoints),
    warn,
  };
}

function checkpointsOption(value: unknown): "sandbox" | "shell" {
  if (value === undefined) return "sandbox";
  if (value !== "sandbox" && value !== "shell")
    throw new InvalidOptionError("checkpoints", `checkpoints must be "sandbox" or "shell", got ${describe(value)}`);
  return value;
}

function optionalName(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !E2B_NAME.test(value))
    throw new InvalidOptionError(
      name,
      `${name} must be an E2B name (letters, digits, and . _ : / - inside), got ${describe(value)}`,
    );
  return value;
}

/** Metadata: any string keys, string values. */
function labels(name: string, value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(plainObject(name, value))) {
    if (typeof item !== "string")
      throw new InvalidOptionError(`${name}.${key}`, `${name}.${key} must be a string, got ${describe(item)}`);
    out[key] = item;
  }
  return out;
}

/** What the SDK is told of where E2B is; only what was given, so the SDK's own environment variables still apply. */
function connection(raw: Record<string, unknown>, requestTimeoutMs: number): E2bConnection {
  const out: E2bConnection = { requestTimeoutMs: Math.ceil(requestTimeoutMs) };
  if (raw.apiKey !== undefined) {
    if (typeof raw.apiKey !== "string" || raw.apiKey === "" || /[\0\r\n]/.test(raw.apiKey))
      throw new InvalidOptionError("apiKey", `apiKey must be a non-empty string, got ${describeSecret(raw.apiKey)}`);
    out.apiKey = raw.apiKey;
  }
  if (raw.domain !== undefined) {
    if (typeof raw.domain !== "string" || !/^[A-Za-z0-9.-]+(:\d+)?$/.test(raw.domain))
      throw new InvalidOptionError(
        "domain",
        `domain must be a host name such as "e2b.app", got ${describe(raw.domain)}`,
      );
    out.domain = raw.domain;
  }
  for (const key of ["apiUrl", "sandboxUrl"] as const) {
    const value = raw[key];
    if (value === undefined) continue;
    if (typeof value !== "string" || !URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol))
      throw new InvalidOptionError(key, `${key} must be an http:// or https:// URL, got ${describe(value)}`);
    out[key] = value;
  }
  return out;
}

/** What a warm pool refuses of an e2b config (docs/pools.md). */
export const E2B_POOL_REFUSED: readonly PoolRefusal[] = [
  { key: "sandboxId", why: "every member needs a sandbox of its own, not one connected to by id" },
  {
    key: "onClose",
    why: "a released member is killed, never kept",
    refuses: (onClose) => onClose !== undefined && onClose !== "kill",
  },
];
