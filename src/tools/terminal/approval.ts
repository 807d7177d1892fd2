/**
 * The approval hook: a callback that may block a `terminal` command before it
 * runs. It is consulted where a command acts on a real machine
 * (`Environment.actsOnHost`: local and SSH); a container or sandbox is its
 * own boundary.
 *
 * Nothing is blocked by default. `blockDangerousCommands()` builds a hook
 * from a list of patterns that users opt into.
 */

export interface ApprovalRequest {
  command: string;
  /** The session's backend ("local", "ssh"). */
  backend: string;
  /** Where the command will run (for a line typed into a process: where that process started). */
  cwd: string;
  /** Set when the command is a line typed into a running process: that process's session_id. */
  process?: string;
}

/** `true` runs the command; `false` or a reason (shown to the model) blocks it. */
export type ApprovalHook = (request: ApprovalRequest) => boolean | string | Promise<boolean | string>;

/**
 * Asks the hook about a command that would act on a real machine: the reason
 * to show the model when it is blocked, undefined to run it. Every tool that
 * starts a command asks here (terminal, exec_command), and so does every
 * line typed into a running process (process/typed-lines.ts).
 */
export async function approvalBlock(
  approve: ApprovalHook | undefined,
  session: { readonly actsOnHost: boolean; readonly backend: string },
  request: { command: string; cwd: string; process?: string },
): Promise<string | undefined> {
  if (approve === undefined || !session.actsOnHost) return undefined;
  let verdict: boolean | string;
  try {
    verdict = await approve({ ...request, backend: session.backend });
  } catch (error) {
    // A broken hook must not wave commands through.
    return `Command blocked: the approval check failed (${error instanceof Error ? error.message : String(error)}).`;
  }
  if (verdict === true) return undefined;
  return typeof verdict === "string" && verdict !== ""
    ? verdict
    : "Command denied by the approval policy. Ask the user to run it, or rephrase the command.";
}

export interface DangerousPattern {
  /** A stable key, to allow one pattern by name. */
  key: string;
  pattern: RegExp;
  description: string;
}

// Matched against the command with runs of whitespace collapsed. A command
// position is the start or after ; & | ( ` $( or a newline.
const AT_COMMAND = String.raw`(?:^|[;&|(\x60\n]|\$\()\s*(?:sudo\s+(?:-\S+\s+)*)?`;

export const DANGEROUS_PATTERNS: readonly DangerousPattern[] = Object.freeze([
  {
    key: "rm-root",
    pattern: new RegExp(`${AT_COMMAND}rm\\s+(?:-\\S+\\s+)*(?:/|/\\*|~|~/|\\$HOME)(?:\\s|$)`),
    description: "delete the root or home directory",
  },
  {
    key: "rm-recursive",
    pattern: new RegExp(`${AT_COMMAND}rm\\s+(?:-\\S+\\s+)*-[a-zA-Z]*[rR]`),
    description: "recursive delete",
  },
  {
    key: "chmod-world",
    pattern: /\bchmod\s+(?:-\S+\s+)*(?:0?777|0?666|[ao]\+w|o\+rwx)\b/,
    description: "make files world-writable",
  },
  {
    key: "chown-root",
    pattern: /\bchown\s+(?:-\S+\s+)*-[a-zA-Z]*R[a-zA-Z]*\s+root\b/,
    description: "recursive chown to root",
  },
  { key: "mkfs", pattern: /\bmkfs(?:\.\w+)?\b/, description: "format a filesystem" },
  { key: "dd", pattern: new RegExp(`${AT_COMMAND}dd\\s+.*\\bif=`), description: "raw disk copy with dd" },
  {
    key: "write-block-device",
    pattern: />\s*\/dev\/(?:sd|nvme|hd|vd|xvd|mmcblk)/,
    description: "write to a block device",
  },
  {
    key: "sql-drop",
    pattern: /\b(?:DROP\s+(?:TABLE|DATABASE|SCHEMA)|TRUNCATE\s+TABLE)\b/i,
    description: "drop or truncate a database table",
  },
  { key: "sql-delete-all", pattern: /\bDELETE\s+FROM\s+\w+\s*(?:;|$|")/i, description: "DELETE without WHERE" },
  { key: "write-etc", pattern: /(?:>|\btee\s+(?:-\S+\s+)*)\s*\/etc\//, description: "overwrite a file in /etc" },
  {
    key: "systemctl",
    pattern: /\bsystemctl\s+(?:stop|disable|mask)\b/,
    description: "stop or disable a system service",
  },
  {
    key: "kill-all",
    pattern: /\bkill\s+-(?:9|KILL|s\s+KILL)\s+-1\b|\bpkill\s+-9\b|\bkillall\b/,
    description: "kill every process",
  },
  { key: "fork-bomb", pattern: /:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/, description: "fork bomb" },
  {
    key: "pipe-to-shell",
    pattern: /\b(?:curl|wget)\b[^|]*\|\s*(?:sudo\s+)?(?:ba|z|k)?sh\b/,
    description: "pipe a download into a shell",
  },
  { key: "remote-script", pattern: /\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b/, description: "run a downloaded script" },
  { key: "find-delete", pattern: /\bfind\b.*(?:-delete\b|-exec\s+rm\b)/, description: "delete files found by find" },
  { key: "xargs-rm", pattern: /\bxargs\s+(?:-\S+\s+)*rm\b/, description: "delete files through xargs" },
  {
    key: "copy-into-etc",
    pattern: /\b(?:cp|mv|install)\s+.*\s\/etc\/|\bsed\s+(?:-\S+\s+)*-i\S*\s.*\/etc\//,
    description: "change a file in /etc",
  },
]);

/** The first dangerous pattern a command matches, if any. */
export function findDangerousPattern(
  command: string,
  patterns: readonly DangerousPattern[] = DANGEROUS_PATTERNS,
): DangerousPattern | undefined {
  const flat = command.replace(/[ \t]+/g, " ");
  return patterns.find((entry) => entry.pattern.test(flat));
}

/**
 * A hook that blocks commands matching `patterns` (all of DANGEROUS_PATTERNS
 * unless given), except the keys in `allow`.
 */
export function blockDangerousCommands(
  options: { patterns?: readonly DangerousPattern[]; allow?: readonly string[] } = {},
): ApprovalHook {
  const allowed = new Set(options.allow ?? []);
  const patterns = (options.patterns ?? DANGEROUS_PATTERNS).filter((entry) => !allowed.has(entry.key));
  return ({ command }) => {
    const hit = findDangerousPattern(command, patterns);
    return hit === undefined
      ? true
      : `Command denied: it looks like it would ${hit.description} (pattern "${hit.key}"). Ask the user to run it, or rephrase the command.`;
  };
}
