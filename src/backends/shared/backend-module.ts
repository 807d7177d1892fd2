/**
 * What a backend declares about itself, in one record exported by its
 * folder's index.ts: the only thing code outside `src/backends/` asks of a
 * backend, through the table in `src/backends/index.ts`. Everything but
 * `open` is read without loading the backend's transport or SDK.
 */

import type { Environment } from "../../core/environment.js";
import type { PoolRefusal } from "./config.js";
import type { LeftoverSource } from "./leftover-source.js";
import type { NamedSessionPolicy } from "./named-policy.js";

export interface BackendModule {
  /** Validates the config once and opens a session; the transport (and any SDK) is loaded only here. */
  open(raw: Record<string, unknown>): Promise<Environment>;
  /** Every option name the backend takes (a config without `backend` that uses one is blamed on that). */
  keys: readonly string[];
  /** The options it cannot open without, each with a value a user would put there (for the CLI's words). */
  required?: Readonly<Record<string, string>>;
  /** What it keeps for a named CLI session; a backend without one keeps its config as given. */
  named?: NamedSessionPolicy;
  /** What its sessions of dead owners can leave on this machine (`shellwright sessions --prune`). */
  leftovers?: LeftoverSource;
  /** Things it keeps on purpose beyond a session (a kept container), which `shellwright sessions` lists. */
  kept?: KeptThings;
  /** The options a warm pool must refuse for it: what members would share. */
  poolRefuses?: readonly PoolRefusal[];
  /** True when its sessions see this machine's files (a server's paths are then this machine's too). */
  sharesHostFiles: boolean;
  /** What can be checked before a server says it is ready (a cwd that exists, a sandbox that can be built). */
  checkStart?(start: StartCheck): Promise<void>;
  /** Hides a host path (a server's token file) from every sandbox this process starts, until the returned call. */
  hideFromSandboxes?(path: string): () => void;
}

export interface StartCheck {
  /** The session's first cwd. */
  cwd?: unknown;
  /** The config's `sandbox` option, for a backend that has one. */
  sandbox?: unknown;
  /** More directories that must exist, each with the option that named it. */
  dirs?: { option: string; path: string }[];
}

export interface KeptThing {
  name: string;
  image: string;
  status: string;
  /** Kept on purpose (it outlives its session), rather than left by a dead owner. */
  keep: boolean;
}

export interface KeptThings {
  /** What one is called ("container"), and the heading `shellwright sessions` prints above them. */
  noun: string;
  heading: string;
  /** All of them, when the backend's engine answers within `timeoutMs`. */
  list(options: { timeoutMs: number }): Promise<KeptThing[]>;
  /** Removes those named; returns the names removed. */
  remove(names: string[]): Promise<string[]>;
}
