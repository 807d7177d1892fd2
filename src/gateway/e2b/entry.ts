/**
 * What serve's E2B API keeps for a sandbox beside the record envd's services
 * share (sandbox.ts): its control-plane facts, its timer and its processes.
 */

import type { ServerResponse } from "node:http";
import { createContextKey } from "@connectrpc/connect";
import type { E2bSandbox } from "./sandbox.js";
import type { ProcessTable } from "./process/table.js";

/** What `commands.run` keeps between calls (docs/e2b.md): E2B's fresh start each time, or the session's state. */
export type CommandsMode = "fresh" | "session";

export interface SandboxEntry {
  readonly record: E2bSandbox;
  readonly templateId: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly startedAt: Date;
  endAt: Date;
  timer: NodeJS.Timeout | undefined;
  readonly commands: CommandsMode;
  readonly processes: ProcessTable;
  /** Variables every command gets (create's envVars), reported by envd's GET /envs. */
  readonly envVars: Readonly<Record<string, string>>;
  /**
   * Its envd RPCs still open (a process's stream, a directory watch): when the
   * sandbox ends they are cut, as E2B's are when its machine goes away, not
   * ended with a process's exit (sandbox-table.ts).
   */
  readonly openRpcs: Set<ServerResponse>;
}

/** The sandbox an envd RPC is for, with this API's own state (the process service needs its processes). */
export const SANDBOX_ENTRY = createContextKey<SandboxEntry | undefined>(undefined, {
  description: "e2b sandbox entry",
});
