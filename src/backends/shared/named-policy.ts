/** What a backend declares about a named CLI session (its record's `named`). */

import type { Environment } from "../../core/environment.js";

/**
 * `Config`: a backend's config as the CLI stores it. The table
 * (backends/index.ts) hands the policy out typed with EnvironmentConfig,
 * which a backend's own folder cannot import without a cycle.
 */
export interface NamedSessionPolicy<Config extends object = Record<string, unknown>> {
  /** A new named session's options; `dir` is the session's own directory in the CLI's store. */
  create?(config: Config, name: string, dir: string): Config;
  /** A stored one's options when a later process reopens it; `forClose`: it may remove what it kept. */
  reopen?(config: Config, dir: string, forClose: boolean): Config;
  /** What is remembered after the first command, to reattach later. */
  remember?(config: Config, env: Environment): Config;
  /**
   * True where a one-command CLI process still wants the fast path (the
   * gateway: its server decides); elsewhere a helper would be started only
   * to be thrown away.
   */
  keepsFastPath?: boolean;
}
