/**
 * The `execute` way to follow one of a process's logs byte-exact (its stdout or its stderr kept apart): the log
 * follower's bytes (log-follower.ts) go through an encoder inside the backend, since a call's output reaches Node
 * as text and a NUL or a byte that is not UTF-8 would not survive it. Each read (`dd` takes what the pipe holds, up
 * to 64 KiB, and never waits for more) becomes one line of base64: the bytes arrive as they were written, in
 * order, a few processes per read rather than per byte.
 */

import type { Environment } from "../../core/environment.js";
import { shellQuote } from "../../core/script.js";
import type { BackgroundProcess } from "./background-process.js";
import { followScript, type LogName } from "./log-bound.js";
import { runLongLived } from "./long-lived.js";

/** The longest a timer may wait in Node (about 24.8 days). */
const FOREVER_MS = 2 ** 31 - 1;
/** The most one read takes: a pipe's default capacity. */
const READ_BYTES = 65536;

/** Reads stdin as it comes, one base64 line per read, until its end. */
const ENCODER = `while :; do __sw_c=$(command dd bs=${READ_BYTES} count=1 2>/dev/null | command base64 | command tr -d '\\n'); [[ -n $__sw_c ]] || break; builtin printf '%s\\n' "$__sw_c"; done`;

/** The script: the log `name` from byte `fromByte`, encoded. */
export function followBytesScript(dir: string, pid: number, name: LogName, fromByte: number): string {
  return `{\n${followScript(dir, pid, fromByte, name)}\n} | { ${ENCODER}; }`;
}

/**
 * Follows `name` from byte `fromByte`; `sink` gets its bytes, `ended` is told once the follower is over. The
 * controller ends it; `started` rejects when the backend refused it (a gateway at its bound of long-lived calls).
 */
export function followBytes(
  session: Environment,
  process: BackgroundProcess,
  name: LogName,
  sink: (bytes: Uint8Array) => void,
  ended: () => void,
  fromByte = 0,
): { controller: AbortController; started: Promise<void> } {
  const controller = new AbortController();
  let partial = "";
  const onOutput = (text: string): void => {
    const lines = (partial + text).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) if (line !== "") sink(Buffer.from(line, "base64"));
  };
  const script = followBytesScript(shellQuote(process.files.dir), process.pid, name, fromByte);
  const { started, result } = runLongLived(session, script, {
    isolated: true,
    timeoutMs: FOREVER_MS,
    signal: controller.signal,
    onOutput,
  });
  result.catch(() => undefined).finally(ended);
  return { controller, started };
}
