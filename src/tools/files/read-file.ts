/**
 * read_file: a page of a text file with line numbers, read through the session
 * so it behaves the same on every backend. One round trip for a normal page:
 * the backend reports the file's kind, size and line count, a sample for
 * binary detection, and the page itself (long lines already cut there, so a
 * minified one-line file does not travel whole).
 */

import { posix } from "node:path";
import { z } from "zod";
import { redactorFor } from "../shared/redaction.js";
import { defineTool, type ToolDefinition, type ToolResult } from "../shared/tool-definition.js";
import { parseFramed, quotePath, runOnBackend } from "../shared/backend-io.js";
import { looksBinary } from "../../core/binary.js";
import { BINARY_EXTENSIONS, IMAGE_EXTENSIONS, extensionOf } from "./file-kinds.js";
import { similarNames } from "./similar-names.js";

export const READ_DEFAULT_LIMIT = 500;
export const READ_MAX_LIMIT = 2000;
export const MAX_LINE_CHARS = 2000;
export const LINE_CUT_MARKER = "... [truncated]";
const SAMPLE_BYTES = 1024;
const LARGE_FILE_BYTES = 512_000;

/** Reading these would block or never end; refused by their literal path (and on the backend, as resolved). */
const DEVICE_PATHS = new Set([
  "/proc/kmsg",
  "/dev/kmsg",
  "/dev/zero",
  "/dev/random",
  "/dev/urandom",
  "/dev/full",
  "/dev/stdin",
  "/dev/tty",
  "/dev/console",
  "/dev/stdout",
  "/dev/stderr",
  "/dev/fd/0",
  "/dev/fd/1",
  "/dev/fd/2",
]);

export function isDevicePath(path: string): boolean {
  return DEVICE_PATHS.has(path) || /^\/proc\/[^/]+\/fd\/[012]$/.test(path);
}

/**
 * Regular files that never end: refused at once by their resolved path on the backend
 * (a symlink or `/proc/1/root/…` leads there too). A bash `case` pattern.
 */
const ENDLESS_FILES =
  "/proc/kmsg|/sys/kernel/tracing/trace_pipe|/sys/kernel/debug/tracing/trace_pipe|*/per_cpu/cpu*/trace_pipe*";

/**
 * Files of /proc and /sys, and any "regular" file whose size reads 0, may be
 * generated as they are read and never end or block (a FUSE file, /proc/self/pagemap):
 * such a file is first copied, at most PSEUDO_FILE_MAX_BYTES and for at most
 * PSEUDO_FILE_SECONDS, and the copy is what gets read. A normal /proc file
 * (cpuinfo, meminfo, status) is far smaller and instant.
 */
export const PSEUDO_FILE_MAX_BYTES = 4 * 1024 * 1024;
export const PSEUDO_FILE_SECONDS = 3;

export interface ReadFileToolOptions {
  /**
   * A read whose formatted content is longer than this is refused with advice.
   * @default 100000
   */
  maxChars?: number;
}

const schema = z
  .object({
    path: z
      .string()
      .min(1)
      .describe(
        "Path of the file; relative paths start at the terminal's current directory, `~` is the backend's home.",
      ),
    offset: z.number().int().min(1).default(1).describe("First line to read, 1-based."),
    limit: z
      .number()
      .int()
      .min(1)
      .default(READ_DEFAULT_LIMIT)
      .describe(`Number of lines to read (at most ${READ_MAX_LIMIT}; larger values are clamped).`),
  })
  // Unknown arguments are refused (runTool names them): one ignored silently could change what the call does.
  .strict();

/** `N|content`, lines longer than MAX_LINE_CHARS cut with a marker. */
export function formatLines(lines: readonly string[], firstLineNumber: number): string {
  return lines
    .map((line, index) => {
      const chars = Array.from(line);
      const shown = chars.length > MAX_LINE_CHARS ? chars.slice(0, MAX_LINE_CHARS).join("") + LINE_CUT_MARKER : line;
      return `${firstLineNumber + index}|${shown}`;
    })
    .join("\n");
}

/** The page's bytes as display lines: split on LF, a trailing CR dropped, invalid UTF-8 shown as U+FFFD. */
export function pageLines(page: Buffer, stripBom: boolean): string[] {
  let text = page.toString("utf8");
  if (stripBom && text.startsWith("\uFEFF")) text = text.slice(1);
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}

/** Bash that refuses a known endless file (see ENDLESS_FILES) by its resolved path, before any read. */
function refuseStreams(): string[] {
  return [
    `__sw_rp=$(realpath -- "$__sw_p" 2>/dev/null || readlink -f -- "$__sw_p" 2>/dev/null) || __sw_rp=$__sw_p`,
    `case $__sw_rp in ${ENDLESS_FILES}) printf 'kind stream\\nresolved %s\\n' "$__sw_rp"; exit 0 ;; esac`,
  ];
}

/**
 * Bash run once the path is known to be a readable "regular" file: replaces a
 * pseudo file by a bounded copy (see PSEUDO_FILE_MAX_BYTES), removed when the
 * producer ends. Needs `$__sw_rp` (refuseStreams).
 */
export function boundedCopy(seconds = PSEUDO_FILE_SECONDS): string[] {
  // A few KiB more than the limit, a multiple of 8: /proc/*/pagemap refuses reads of other sizes.
  const take = PSEUDO_FILE_MAX_BYTES + 4096;
  return [
    `case $__sw_rp in /proc/*|/sys/*) __sw_pseudo=1 ;; *) [ -s "$__sw_p" ] && __sw_pseudo= || __sw_pseudo=1 ;; esac`,
    `if [ -n "$__sw_pseudo" ]; then`,
    `  __sw_cp=$(mktemp "\${TMPDIR:-/tmp}/shellwright-read.XXXXXX") || exit 1; trap 'rm -f -- "$__sw_cp"' EXIT`,
    `  if command -v timeout >/dev/null 2>&1; then timeout -s KILL ${seconds} head -c ${take} -- "$__sw_p" > "$__sw_cp" 2>/dev/null; __sw_rc=$?`,
    // Without timeout(1): a watchdog that kills the copy; its output goes nowhere, so it holds no pipe open.
    `  else head -c ${take} -- "$__sw_p" > "$__sw_cp" 2>/dev/null & __sw_k=$!`,
    `    ( __sw_i=0; while kill -0 $__sw_k 2>/dev/null && [ $__sw_i -lt ${seconds * 10} ]; do sleep 0.1; __sw_i=$((__sw_i + 1)); done; kill -9 $__sw_k 2>/dev/null ) >/dev/null 2>&1 &`,
    `    wait $__sw_k; __sw_rc=$?; fi`,
    `  if [ $__sw_rc -ge 124 ]; then echo 'kind blocks'; exit 0; fi`,
    `  if [ $(wc -c < "$__sw_cp") -gt ${PSEUDO_FILE_MAX_BYTES} ]; then echo 'kind endless'; exit 0; fi`,
    `  __sw_p=$__sw_cp`,
    `fi`,
  ];
}

export function createReadFileTool(options: ReadFileToolOptions = {}): ToolDefinition<typeof schema> {
  const maxChars = options.maxChars ?? 100_000;
  // A page longer than this (after cutting each line to 4×MAX_LINE_CHARS bytes) formats to more than maxChars anyway.
  const pageCap = maxChars * 4 + 4096;

  return defineTool({
    name: "read_file",
    description:
      "Read a text file with line numbers and pagination. Output format: 'LINE_NUM|CONTENT', one line per line of the file; " +
      `lines longer than ${MAX_LINE_CHARS} characters are cut and end with '${LINE_CUT_MARKER}'. ` +
      `Reads ${READ_DEFAULT_LIMIT} lines from \`offset\` by default (at most ${READ_MAX_LIMIT}); the result says the total and how to read the next page. ` +
      `Reads exceeding ~${maxChars.toLocaleString("en-US")} characters are rejected: use offset and limit. ` +
      "Binary files are refused, images are detected; use the terminal for those. A missing file gets suggestions of similar names.",
    inputSchema: schema,
    async handler({ path, offset, limit: requested }, context): Promise<ToolResult> {
      const { session, signal } = context;
      const limit = Math.min(requested, READ_MAX_LIMIT);
      if (isDevicePath(path)) {
        return { error: `Cannot read '${path}': this is a device file that would block or produce infinite output.` };
      }
      const extension = extensionOf(path);
      const isImage = IMAGE_EXTENSIONS.has(extension);
      if (BINARY_EXTENSIONS.has(extension) && !isImage) {
        return {
          error: `Cannot read binary file '${path}' (${extension}). Use the terminal to inspect binary files (for example \`xxd '${path}' | head\`).`,
        };
      }
      const end = offset + limit - 1;
      const producer = [
        `__sw_p=${quotePath(path)}`,
        `if [ -d "$__sw_p" ]; then echo 'kind dir'; exit 0; fi`,
        `if [ ! -e "$__sw_p" ]; then echo 'kind missing'; __sw_d=$(dirname -- "$__sw_p"); echo --; [ -d "$__sw_d" ] && ls -1A -- "$__sw_d" 2>/dev/null | head -n 2000; exit 0; fi`,
        `if [ ! -f "$__sw_p" ]; then echo 'kind special'; exit 0; fi`,
        ...refuseStreams(),
        `if [ ! -r "$__sw_p" ]; then echo 'kind unreadable'; exit 0; fi`,
        ...boundedCopy(),
        `__sw_wc=$(wc -lc < "$__sw_p") || exit 1; builtin set -- $__sw_wc; __sw_l=$1 __sw_n=$2`,
        // A last line without a newline is a line too (NUL bytes dropped by $(…) do not matter: such a file is binary).
        `if [ "$__sw_n" -gt 0 ]; then { __sw_last=$(tail -c 1 "$__sw_p"); } 2>/dev/null; [ -n "$__sw_last" ] && __sw_l=$((__sw_l + 1)); fi`,
        `printf 'kind file\\nsize %s\\nlines %s\\n--\\n' $__sw_n $__sw_l`,
        `head -c ${SAMPLE_BYTES} "$__sw_p"`,
        // One awk for the page: lines from offset to end, each cut to 4 bytes per shown character, the whole capped.
        isImage
          ? ""
          : `LC_ALL=C awk -v a=${offset} -v b=${end} -v w=${MAX_LINE_CHARS * 4} -v cap=${pageCap} 'NR >= a { s = substr($0, 1, w); t += length(s) + 1; print s; if (t > cap) exit } NR >= b { exit }' "$__sw_p"`,
      ].join("\n");
      const result = await runOnBackend(session, producer, { signal });
      if (result.exitCode !== 0)
        return { error: `Could not read '${path}': ${result.stderr.trim() || `exit code ${result.exitCode}`}` };
      const { fields, body } = parseFramed(result.stdout);
      const kind = fields.get("kind");

      if (kind === "missing") {
        const names = body.toString("utf8").split("\n").filter(Boolean);
        const similar = similarNames(posix.basename(path), names).map((name) => posix.join(posix.dirname(path), name));
        return { error: `File not found: ${path}`, ...(similar.length > 0 ? { similar_files: similar } : {}) };
      }
      if (kind === "dir")
        return { error: `'${path}' is a directory, not a file. Use search_files with target='files' to list it.` };
      if (kind === "special") {
        return {
          error: `Cannot read '${path}': it is not a regular file (a device, FIFO or socket) and could block or produce infinite output.`,
        };
      }
      if (kind === "unreadable") return { error: `Permission denied: '${path}' is not readable.` };
      if (kind === "endless" || kind === "blocks" || kind === "stream") {
        const why =
          kind === "stream"
            ? `resolves to '${fields.get("resolved") ?? path}', a stream that never ends (a kernel log or trace pipe)`
            : kind === "endless"
              ? `it produced more than ${PSEUDO_FILE_MAX_BYTES.toLocaleString("en-US")} bytes without ending`
              : `reading it did not finish within ${PSEUDO_FILE_SECONDS} seconds`;
        return {
          error: `Cannot read '${path}': it is a generated (special) file and ${why}; it could block or produce infinite output. Use the terminal with a bound, e.g. \`head -c 4096 '${path}'\` or \`timeout 5 cat '${path}'\`.`,
        };
      }
      if (kind !== "file") return { error: `Could not read '${path}': unexpected reply from the backend.` };

      const fileSize = Number(fields.get("size"));
      const totalLines = Number(fields.get("lines"));
      if (isImage) {
        return {
          path,
          is_image: true,
          is_binary: true,
          file_size: fileSize,
          hint: "Image file detected: it cannot be shown as text. Use an image-capable tool to look at it, or the terminal to inspect it.",
        };
      }
      const sampleLength = Math.min(SAMPLE_BYTES, fileSize);
      const sample = body.subarray(0, sampleLength);
      if (looksBinary(sample)) {
        return {
          path,
          is_binary: true,
          file_size: fileSize,
          error: `Binary file - cannot display as text: '${path}'. Use the terminal to inspect it (for example \`file\`, \`xxd | head\`, \`strings\`).`,
        };
      }
      if (totalLines === 0) return { path, content: "", total_lines: 0, file_size: fileSize, truncated: false };
      if (offset > totalLines) {
        return {
          path,
          total_lines: totalLines,
          file_size: fileSize,
          error: `offset ${offset} is past the end of the file (${totalLines} lines). Use an offset from 1 to ${totalLines}.`,
        };
      }

      const page = body.subarray(sampleLength);
      const redactor = redactorFor(context);
      let lines = pageLines(page.subarray(0, pageCap), offset === 1);
      // Masked before long lines are cut (a cut must not leave half a secret) and line by line (numbers stay right).
      if (redactor !== undefined) lines = redactor.redact(lines.join("\n"), { keepLines: true }).split("\n");
      const content = formatLines(lines, offset);
      if (page.length > pageCap || content.length > maxChars) {
        const produced =
          page.length > pageCap
            ? `more than ${maxChars.toLocaleString("en-US")}`
            : content.length.toLocaleString("en-US");
        return {
          path,
          total_lines: totalLines,
          file_size: fileSize,
          error: `Read produced ${produced} characters which exceeds the safety limit (${maxChars.toLocaleString("en-US")} chars). Use offset and limit to read a smaller range. The file has ${totalLines} lines total.`,
        };
      }
      const lastShown = offset + lines.length - 1;
      const truncated = totalLines > lastShown;
      const out: ToolResult = { path, content, total_lines: totalLines, file_size: fileSize, truncated };
      if (truncated) {
        out.hint = `Use offset=${lastShown + 1} to continue reading (showing ${offset}-${lastShown} of ${totalLines} lines)`;
        if (fileSize > LARGE_FILE_BYTES && limit > 200) {
          out.hint += `. This file is large (${fileSize.toLocaleString("en-US")} bytes): consider reading only the section you need, or search_files to find it.`;
        }
      }
      return out;
    },
  });
}

export const readFileTool = createReadFileTool();
