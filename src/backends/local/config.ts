/**
 * The local backend's config: its public type, the option names it accepts
 * and their validation, in one place.
 */

import { optionalBoolean, optionalShellString, rejectUnknown, stringRecord } from "../../core/options.js";
import { optionKeys, type CommonConfig, type PoolRefusal } from "../shared/config.js";
import { normalizeSandbox, type SandboxConfig, type SandboxOptions } from "./sandbox/config.js";

export interface LocalTransportOptions {
  /** Variables added to this process's environment for the session's first shell. */
  env: Record<string, string>;
  /** Where the snapshot and cwd files live; default: a new private directory under the OS temp dir. */
  stateDir?: string | undefined;
  /** Path of bash; default: the first `bash` on PATH. */
  bashPath?: string | undefined;
  /** Leave the session's processes and files alone when this process dies without close() (CLI named sessions). */
  outliveOwner?: boolean | undefined;
  /** Run every command inside a bubblewrap sandbox (src/backends/local/sandbox/). */
  sandbox?: SandboxOptions | undefined;
  /** The session's first cwd, which the sandbox's relative paths resolve against; default: this process's cwd. */
  cwd?: string | undefined;
  /** A declared workspace root, which the sandbox shows as an overlay (sandbox/overlay.ts). */
  workspace?: string | undefined;
  /** Run calls through the fast-path helper when it is available (docs/fast-path.md); default true. */
  fastPath?: boolean | undefined;
  /** The helper program; default: the one built into this package (tests point it elsewhere). */
  fastPathHelper?: string | undefined;
  /** Start from this process's capture of the same origin's login (core/login-snapshots.ts); default true. */
  reuseLoginSnapshot?: boolean | undefined;
}

export interface LocalConfig extends CommonConfig {
  backend?: "local";
  /** Variables added to this process's environment for the session. */
  env?: Record<string, string>;
  /** Directory for the session's snapshot and cwd files. @default a new private temp dir */
  stateDir?: string;
  /** @default the first bash on PATH */
  bashPath?: string;
  /**
   * Keep the session's background processes (and a given stateDir's files)
   * when this process exits or dies without close(), for another process to
   * reattach and close later (the CLI's named sessions). By default a
   * watchdog ends them. @default false
   */
  outliveOwner?: boolean;
  /**
   * Run every command (and so every tool) inside a bubblewrap sandbox (Linux).
   * `true`: the cwd writable, the usual credential dirs unreadable, no network.
   * See docs/sandbox.md. @default false
   */
  sandbox?: boolean | SandboxConfig;
  /**
   * Run calls through the session's fast-path helper when it is available
   * (docs/fast-path.md): same results, a fraction of the cost per call.
   * false: every call is a fresh `bash` (the plain model). @default true
   */
  fastPath?: boolean;
  /**
   * Start each session from this process's capture of the login shell
   * (`bash -l`) of the same origin (user, machine, environment, cwd) while
   * the profile files are unchanged, instead of running the login again: a
   * slow profile is paid once per origin, not once per session or pool
   * member (docs/persistence.md). false: every session runs its own login.
   * @default true
   */
  reuseLoginSnapshot?: boolean;
  /**
   * The directory checkpoints copy and rollbacks restore (docs/branching.md);
   * without it a checkpoint holds the shell state only. With `sandbox` (as
   * root) it is an overlay inside the sandbox, written into the directory at close.
   */
  workspace?: string;
  /** The largest workspace a checkpoint or fork copies, in bytes. @default 1 GiB */
  workspaceMaxBytes?: number;
}

export const LOCAL_KEYS = optionKeys<LocalConfig>()([
  "env",
  "stateDir",
  "bashPath",
  "outliveOwner",
  "sandbox",
  "fastPath",
  "reuseLoginSnapshot",
  "workspace",
  "workspaceMaxBytes",
]);

export function normalizeLocalConfig(raw: Record<string, unknown>): LocalTransportOptions {
  rejectUnknown("local backend", raw, LOCAL_KEYS);
  return {
    env: stringRecord("env", raw.env),
    stateDir: optionalShellString("stateDir", raw.stateDir),
    bashPath: optionalShellString("bashPath", raw.bashPath),
    outliveOwner: optionalBoolean("outliveOwner", raw.outliveOwner),
    sandbox: normalizeSandbox(raw.sandbox),
    fastPath: optionalBoolean("fastPath", raw.fastPath),
    reuseLoginSnapshot: optionalBoolean("reuseLoginSnapshot", raw.reuseLoginSnapshot),
  };
}

/** What a warm pool refuses of a local config (docs/pools.md). */
export const LOCAL_POOL_REFUSED: readonly PoolRefusal[] = [
  { key: "stateDir", why: "every member needs a state directory of its own" },
  { key: "outliveOwner", why: "a pool's members end with their owner" },
  { key: "workspace", why: "members would share one workspace, which a rollback in one replaces under the others" },
];
