/**
 * The V4A patch format (`*** Begin Patch` … `*** End Patch`), as written by
 * models trained on Codex's apply_patch: pure parsing and pure application to
 * text, so the tool can validate every operation before it touches a file.
 *
 *   *** Update File: path        (optionally followed by `*** Move to: new`)
 *   @@ optional anchor line
 *    context / -removed / +added  (unprefixed lines count as context)
 *   *** Add File: path            (+ lines are the content)
 *   *** Delete File: path
 *   *** Move File: a -> b
 *
 * OpenAI's Responses API sends one file per operation, with the diff alone
 * (no envelope, no header): parseUpdateDiff and parseCreateDiff read those.
 */

import { findMatches } from "./fuzzy-match.js";

export interface Hunk {
  /** The text after `@@`, a line to find before the hunk's context (may be empty). */
  anchor: string;
  lines: Array<{ kind: " " | "-" | "+"; text: string }>;
  /** `*** End of File`: the hunk's context ends the file. */
  atEnd: boolean;
}

export type V4aOperation =
  | { kind: "update"; path: string; moveTo?: string; hunks: Hunk[] }
  | { kind: "add"; path: string; content: string }
  | { kind: "delete"; path: string }
  | { kind: "move"; path: string; moveTo: string };

export class V4aParseError extends Error {
  override name = "V4aParseError";
}

const HEADER = /^\*\*\* (Update|Add|Delete) File: (.+)$/;
const MOVE_FILE = /^\*\*\* Move File: (.+?) -> (.+)$/;
const MOVE_TO = /^\*\*\* Move to: (.+)$/;

export function parseV4a(patch: string): V4aOperation[] {
  const lines = patch.replace(/\r\n/g, "\n").split("\n");
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === "") lines.pop();
  let i = 0;
  while (i < lines.length && lines[i]!.trim() === "") i++;
  if (lines[i]?.trim() === "*** Begin Patch") i++;
  const operations: V4aOperation[] = [];
  let current: V4aOperation | undefined;
  let hunk: Hunk | undefined;

  const needHunk = (): Hunk => {
    if (current?.kind !== "update")
      throw new V4aParseError(`line ${i + 1}: a change line outside an *** Update File section`);
    if (!hunk) {
      hunk = { anchor: "", lines: [], atEnd: false };
      current.hunks.push(hunk);
    }
    return hunk;
  };

  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === "*** End Patch") {
      if (lines.slice(i + 1).some((rest) => rest.trim() !== ""))
        throw new V4aParseError(`line ${i + 1}: text after *** End Patch`);
      break;
    }
    const header = HEADER.exec(line);
    const move = MOVE_FILE.exec(line);
    if (header || move) {
      hunk = undefined;
      if (move) current = { kind: "move", path: move[1]!.trim(), moveTo: move[2]!.trim() };
      else if (header![1] === "Update") current = { kind: "update", path: header![2]!.trim(), hunks: [] };
      else if (header![1] === "Add") current = { kind: "add", path: header![2]!.trim(), content: "" };
      else current = { kind: "delete", path: header![2]!.trim() };
      operations.push(current);
      continue;
    }
    const moveTo = MOVE_TO.exec(line);
    if (moveTo) {
      if (current?.kind !== "update" || current.hunks.length > 0)
        throw new V4aParseError(`line ${i + 1}: *** Move to: must follow an *** Update File: line`);
      current.moveTo = moveTo[1]!.trim();
      continue;
    }
    if (current === undefined)
      throw new V4aParseError(
        `line ${i + 1}: expected *** Update File:, *** Add File:, *** Delete File: or *** Move File:, got ${JSON.stringify(line.slice(0, 80))}`,
      );
    if (current.kind === "add") {
      if (!line.startsWith("+"))
        throw new V4aParseError(`line ${i + 1}: every line of an *** Add File section starts with +`);
      current.content += `${line.slice(1)}\n`;
      continue;
    }
    if (current.kind === "delete" || current.kind === "move") {
      if (line.trim() === "") continue;
      throw new V4aParseError(
        `line ${i + 1}: unexpected text after *** ${current.kind === "delete" ? "Delete" : "Move"} File`,
      );
    }
    if (line.startsWith("@@")) {
      hunk = { anchor: anchorOf(line), lines: [], atEnd: false };
      current.hunks.push(hunk);
      continue;
    }
    readChangeLine(line, needHunk);
  }
  if (operations.length === 0)
    throw new V4aParseError(
      "the patch has no operations (expected *** Update File:, *** Add File:, *** Delete File: or *** Move File:)",
    );
  for (const op of operations) {
    if (
      op.kind === "update" &&
      op.hunks.every((h) => h.lines.every((l) => l.kind === " ")) &&
      op.moveTo === undefined
    ) {
      throw new V4aParseError(`*** Update File: ${op.path} has no changes`);
    }
  }
  return operations;
}

/** The text after `@@`; a unified diff's line numbers (`@@ -1,2 +1,3 @@`) say nothing V4A uses, so they are no anchor. */
function anchorOf(line: string): string {
  const anchor = line
    .replace(/^@@\s?/, "")
    .replace(/\s?@@$/, "")
    .trim();
  return /^-\d+(,\d+)? \+\d+(,\d+)?$/.test(anchor) ? "" : anchor;
}

/** One line of a hunk after its `@@` (or of the first hunk, which may go without): context, removed, added. */
function readChangeLine(line: string, hunk: () => Hunk): void {
  if (line.trim() === "*** End of File") {
    hunk().atEnd = true;
    return;
  }
  if (line.startsWith("\\")) return; // "\ No newline at end of file"
  const kind = line[0] === "-" || line[0] === "+" || line[0] === " " ? line[0] : " ";
  hunk().lines.push({ kind, text: kind === line[0] ? line.slice(1) : line });
}

/** The diff's lines: CRLF read as LF, the empty line after a final newline dropped. */
function diffLines(diff: string): string[] {
  const lines = diff.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * The hunks of an `update_file` operation's diff (OpenAI's apply_patch): `@@`
 * lines, context, `-` and `+` lines and `*** End of File`, without the
 * `*** Update File:` header. Throws V4aParseError when it is malformed or
 * changes nothing.
 */
export function parseUpdateDiff(diff: string): Hunk[] {
  const hunks: Hunk[] = [];
  let hunk: Hunk | undefined;
  const current = (): Hunk => {
    if (hunk === undefined) {
      hunk = { anchor: "", lines: [], atEnd: false };
      hunks.push(hunk);
    }
    return hunk;
  };
  for (const [index, line] of diffLines(diff).entries()) {
    if (line.startsWith("@@")) {
      hunk = { anchor: anchorOf(line), lines: [], atEnd: false };
      hunks.push(hunk);
    } else if (line.startsWith("***") && line.trim() !== "*** End of File") {
      throw new V4aParseError(
        `line ${index + 1}: ${JSON.stringify(line.slice(0, 80))} cannot appear in the diff of one file (only @@ lines, context, - and + lines, and *** End of File)`,
      );
    } else readChangeLine(line, current);
  }
  if (hunks.every((h) => h.lines.every((l) => l.kind === " "))) throw new V4aParseError("the diff has no changes");
  return hunks;
}

/**
 * The content of a `create_file` operation's diff (OpenAI's apply_patch):
 * every line starts with `+`, and the lines are joined with newlines, so a
 * final newline is a last empty `+` line, as OpenAI's own applier reads it.
 */
export function parseCreateDiff(diff: string): string {
  const lines = diffLines(diff);
  for (const [index, line] of lines.entries()) {
    if (!line.startsWith("+"))
      throw new V4aParseError(
        `line ${index + 1}: every line of a create_file diff starts with + (got ${JSON.stringify(line.slice(0, 80))})`,
      );
  }
  return lines.map((line) => line.slice(1)).join("\n");
}

/**
 * The hunk's replacement with its context lines as the file has them: a
 * context line found by a loose match (other indentation or trailing spaces)
 * is not a change, so it stays as it was; the added lines are `replacement`'s
 * (re-indented by the match where it re-indents). Unchanged when the match is
 * not line for line.
 */
function keepContext(matched: string, hunk: Hunk, replacement: string): string {
  const fileLines = matched.replace(/\n$/, "").split("\n");
  const newLines = replacement.replace(/\n$/, "").split("\n");
  if (fileLines.length !== hunk.lines.filter((l) => l.kind !== "+").length) return replacement;
  if (newLines.length !== hunk.lines.filter((l) => l.kind !== "-").length) return replacement;
  let at = 0;
  let made = 0;
  let out = "";
  for (const line of hunk.lines) {
    if (line.kind === "-") at++;
    else out += `${line.kind === " " ? fileLines[at++] : newLines[made]}\n`;
    if (line.kind !== "-") made++;
  }
  return out;
}

/**
 * Applies an update's hunks to `text` (LF line endings), in order: each hunk is
 * found after the previous one (after its anchor, when it has one), exactly or
 * through the fuzzy chain, and must match whole lines.
 */
export function applyHunks(
  text: string,
  hunks: readonly Hunk[],
  path: string,
): { ok: true; text: string } | { ok: false; error: string } {
  const endsWithNewline = text === "" || text.endsWith("\n");
  let work = endsWithNewline ? text : `${text}\n`;
  let cursor = 0;
  for (const [number, hunk] of hunks.entries()) {
    const label = `${path}: hunk ${number + 1}${hunk.anchor ? ` (@@ ${hunk.anchor})` : ""}`;
    let from = cursor;
    if (hunk.anchor !== "") {
      const anchor = findMatches(work.slice(cursor), hunk.anchor, hunk.anchor, { lineAligned: true });
      if (!anchor) return { ok: false, error: `${label}: could not find the @@ line ${JSON.stringify(hunk.anchor)}` };
      const line = anchor.spans[0]!;
      const lineEnd = work.indexOf("\n", cursor + line.end);
      from = lineEnd === -1 ? work.length : lineEnd + 1;
    }
    const search = hunk.lines
      .filter((l) => l.kind !== "+")
      .map((l) => `${l.text}\n`)
      .join("");
    const replace = hunk.lines
      .filter((l) => l.kind !== "-")
      .map((l) => `${l.text}\n`)
      .join("");
    if (search === "") {
      // Only additions: after the anchor line, or at the end of the file.
      const at = hunk.anchor !== "" && !hunk.atEnd ? from : work.length;
      work = work.slice(0, at) + replace + work.slice(at);
      cursor = at + replace.length;
      continue;
    }
    const rest = work.slice(from);
    const match = findMatches(rest, search, replace, { lineAligned: true });
    if (!match) {
      return {
        ok: false,
        error: `${label}: could not find the lines to change:\n${search.split("\n").slice(0, 8).join("\n")}`,
      };
    }
    let span = match.spans[0]!;
    if (hunk.atEnd) span = match.spans[match.spans.length - 1]!;
    const start = from + span.start;
    let end = from + span.end;
    // A fuzzy line match may stop before the newline that ends its last line.
    if (work[end] === "\n" && !work.slice(start, end).endsWith("\n")) end++;
    const replacement = keepContext(work.slice(start, end), hunk, match.replacementFor?.(span) ?? match.replacement);
    work = work.slice(0, start) + replacement + work.slice(end);
    cursor = start + replacement.length;
  }
  if (!endsWithNewline && work.endsWith("\n")) work = work.slice(0, -1);
  return { ok: true, text: work };
}
