/**
 * The text editor's `view`: a file as numbered lines (`1: text`, the format
 * Anthropic's documentation shows), all of it or `view_range` [first, last]
 * (1-based, last -1 for the end), or a directory's entries two levels deep.
 * One round trip: the backend sends the file's kind, its line count and only
 * the lines asked for. Devices, FIFOs and files that never end are refused
 * as read_file refuses them; what is shown is cut at `maxChars`.
 */

import { looksBinary } from "../../core/binary.js";
import { boundedCopy, isDevicePath, pageLines } from "../files/read-file.js";
import { parseFramed, quotePath, runOnBackend } from "../shared/backend-io.js";
import type { HandlerContext, ToolResult } from "../shared/tool-definition.js";
import { anthropicError } from "./anthropic-error.js";

const MAX_ENTRIES = 1000;

export async function viewPath(
  path: string,
  range: readonly [number, number] | undefined,
  maxChars: number,
  context: HandlerContext,
): Promise<ToolResult> {
  if (isDevicePath(path)) return anthropicError(`${path} is a device file that would block or never end.`);
  const first = range?.[0] ?? 1;
  const last = range === undefined || range[1] === -1 ? 0 : range[1];
  // Each line is cut to what maxChars could show of it: a one-line minified file does not travel whole.
  const awk = `LC_ALL=C awk -v a=${first} -v b=${last} -v w=${maxChars * 4 + 4} -v cap=${maxChars * 4 + 4096} 'NR >= a && (b == 0 || NR <= b) { s = substr($0, 1, w); t += length(s) + 1; print s; if (t > cap) exit } b > 0 && NR >= b { exit }' "$__sw_p"`;
  const producer = [
    `__sw_p=${quotePath(path)}`,
    `if [ -d "$__sw_p" ]; then printf 'kind dir\\n--\\n'; command find "$__sw_p" -maxdepth 2 -not -path '*/.*' 2>/dev/null | command head -n ${MAX_ENTRIES + 1}; exit 0; fi`,
    `if [ ! -e "$__sw_p" ]; then echo 'kind missing'; exit 0; fi`,
    `if [ ! -f "$__sw_p" ]; then echo 'kind special'; exit 0; fi`,
    `if [ ! -r "$__sw_p" ]; then echo 'kind unreadable'; exit 0; fi`,
    `__sw_rp=$(realpath -- "$__sw_p" 2>/dev/null || readlink -f -- "$__sw_p" 2>/dev/null) || __sw_rp=$__sw_p`,
    ...boundedCopy(),
    `__sw_l=$(LC_ALL=C awk 'END { print NR }' "$__sw_p") || exit 1`,
    `printf 'kind file\\nlines %s\\n--\\n' "$__sw_l"`,
    awk,
  ].join("\n");
  const result = await runOnBackend(context.session, producer, { signal: context.signal });
  if (result.exitCode !== 0) return anthropicError(`could not read ${path}: ${result.stderr.trim()}`);
  const { fields, body } = parseFramed(result.stdout);
  const kind = fields.get("kind");
  if (kind === "missing") return anthropicError("File not found");
  if (kind === "special") return anthropicError(`${path} is not a regular file (a device, FIFO or socket).`);
  if (kind === "unreadable") return anthropicError("Permission denied. Cannot read file.");
  if (kind === "blocks" || kind === "endless") return anthropicError(`${path} is a generated file that does not end.`);
  if (kind === "dir") {
    if (range !== undefined)
      return anthropicError("The `view_range` parameter is not allowed when `path` points to a directory.");
    return viewDirectory(path, body.toString("utf8"));
  }
  if (kind !== "file") return anthropicError(`could not read ${path}: unexpected reply from the backend`);

  const total = Number(fields.get("lines"));
  if (looksBinary(body.subarray(0, 1024))) return anthropicError(`${path} is a binary file; view shows text files.`);
  if (range !== undefined) {
    const problem = rangeProblem(range, total);
    if (problem !== undefined) return anthropicError(problem);
  }
  if (total === 0) return { content: `The file ${path} is empty.` };
  const lines = pageLines(body, first === 1);
  const numbered = lines.map((line, index) => `${first + index}: ${line}`).join("\n");
  if (numbered.length <= maxChars) return { content: numbered };
  const shown = numbered.slice(0, numbered.lastIndexOf("\n", maxChars) + 1 || maxChars);
  const lastShown = first + shown.split("\n").length - 2;
  return {
    content: `${shown}[The view was cut at ${maxChars} characters after line ${lastShown} of ${total}; view_range shows the rest.]`,
  };
}

function rangeProblem([first, last]: readonly [number, number], total: number): string | undefined {
  const shown = `[${first}, ${last}]`;
  if (first < 1 || first > Math.max(total, 1)) {
    return `Invalid \`view_range\`: ${shown}. Its first element \`${first}\` should be within the range of lines of the file: [1, ${total}]`;
  }
  if (last !== -1 && last < first) {
    return `Invalid \`view_range\`: ${shown}. Its second element \`${last}\` should be larger or equal than its first \`${first}\``;
  }
  return undefined;
}

function viewDirectory(path: string, listing: string): ToolResult {
  const entries = listing.split("\n").filter((line) => line !== "");
  const more = entries.length > MAX_ENTRIES ? `\n[… more than ${MAX_ENTRIES} entries; view a subdirectory]` : "";
  return {
    content: `Here's the files and directories up to 2 levels deep in ${path}, excluding hidden items:\n${entries.slice(0, MAX_ENTRIES).join("\n")}${more}`,
  };
}
