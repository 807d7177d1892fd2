/**
 * The approval hook (`approve`, e.g. blockDangerousCommands) for what is
 * typed into a running process: `rm -rf DIR` typed into an interactive bash
 * must meet the same check as the same command given to `terminal`. Every
 * write to a process (`process` write, submit and keys; `write_stdin`) is
 * split into the lines it completes, each joined to what was typed before it
 * since the last line end, and each complete line is asked about before
 * anything is sent. A refused line refuses the whole write: nothing of it is
 * sent, and what was typed before stays pending.
 *
 * What it sees is the bytes sent, not what the program does with them. On a
 * terminal a line ends at CR or LF, and the line discipline's editing is
 * followed (DEL and ^H erase a character, ^W a word, ^U and ^C the line);
 * escape sequences (arrow keys, history recall, tab completion) are dropped,
 * since what they do is the program's. On a pipe a line ends at LF and the
 * bytes are taken as they are. It cannot see a command the program builds
 * itself (history, aliases, a script it reads), a line split so that no part
 * is dangerous alone is seen whole only once it ends, and the hook is given
 * the directory the process started in, not the one its shell is in now.
 */

import type { Environment } from "../../core/environment.js";
import { approvalBlock, type ApprovalHook } from "../terminal/approval.js";
import type { BackgroundProcess } from "./background-process.js";

/** What was typed into each process since its last line end. */
const pending = new WeakMap<BackgroundProcess, string>();

/**
 * The reason to refuse writing `data` to `process` (its first complete line
 * the hook refuses), or undefined to send it. Where the hook is not consulted
 * (no hook, or a backend that is its own boundary) this costs nothing.
 */
export async function typedLineBlock(
  approve: ApprovalHook | undefined,
  session: Environment,
  process: BackgroundProcess,
  data: string,
): Promise<string | undefined> {
  if (approve === undefined || !session.actsOnHost) return undefined;
  const { lines, rest } = splitLines(pending.get(process) ?? "", data, process.pty !== undefined);
  for (const line of lines) {
    if (line.trim() === "") continue;
    const blocked = await approvalBlock(approve, session, { command: line, cwd: process.cwd, process: process.id });
    if (blocked !== undefined) return `Input not sent: ${blocked}`;
  }
  pending.set(process, rest);
  return undefined;
}

/** The complete lines `data` ends, each with what was typed before it, and what is left pending. */
export function splitLines(before: string, data: string, terminal: boolean): { lines: string[]; rest: string } {
  const lines: string[] = [];
  let line = before;
  for (let i = 0; i < data.length; i++) {
    const char = data[i]!;
    if (char === "\n" || (terminal && char === "\r")) {
      lines.push(line);
      line = "";
    } else if (!terminal) {
      line += char;
    } else if (char === "\x7f" || char === "\b") {
      line = [...line].slice(0, -1).join("");
    } else if (char === "\x17") {
      line = line.replace(/\S*\s*$/, "");
    } else if (char === "\x15" || char === "\x03") {
      line = "";
    } else if (char === "\x1b") {
      i += escapeLength(data, i) - 1;
    } else if (char >= " " || char === "\t") {
      line += char;
    }
  }
  return { lines, rest: line };
}

/** The length of the escape sequence at `at` (CSI, SS3, or ESC and one character). */
function escapeLength(data: string, at: number): number {
  const next = data[at + 1];
  if (next === "[") {
    const end = /[\x40-\x7e]/.exec(data.slice(at + 2));
    return end === null ? data.length - at : end.index + 3;
  }
  if (next === "O") return Math.min(3, data.length - at);
  return next === undefined ? 1 : 2;
}
