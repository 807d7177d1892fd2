/**
 * write_file: the whole content of a file, written atomically on the backend.
 * The content arrives byte-exact (stdin, never the command line, no newline
 * added), an existing file keeps its mode, CRLF line endings and BOM, parent
 * directories are created, and sensitive paths are refused.
 */

import { z } from "zod";
import { defineTool, type ToolDefinition, type ToolResult } from "../shared/tool-definition.js";
import { probeForWrite, matchFileStyle, writeAtomic } from "./atomic-write.js";
import { validateGuardOptions, type WriteGuardOptions } from "./path-guard.js";

export type WriteFileToolOptions = WriteGuardOptions;

export const pathSchema = z
  .string()
  .min(1)
  .refine((path) => !/[\n\0]/.test(path), "a path cannot contain a newline or NUL byte");

const schema = z
  .object({
    path: pathSchema.describe(
      "Path of the file; relative paths start at the terminal's current directory, `~` is the backend's home. Parent directories are created.",
    ),
    content: z.string().describe("The complete new content of the file, exactly as it should be stored."),
  })
  // Unknown arguments are refused (runTool names them): one ignored silently could change what the call does.
  .strict();

export function createWriteFileTool(options: WriteFileToolOptions = {}): ToolDefinition<typeof schema> {
  validateGuardOptions(options);
  return defineTool({
    name: "write_file",
    description:
      "Write a file, replacing its whole content (use patch for small edits). The write is atomic; an existing file keeps its permissions, " +
      "CRLF line endings and byte-order mark; missing parent directories are created. Content is stored exactly as given (no newline is added). " +
      "Credential files, shell start-up files and system directories are refused.",
    inputSchema: schema,
    async handler({ path, content }, { session, signal }): Promise<ToolResult> {
      const probe = await probeForWrite(session, path, { guard: options, readAll: false, signal });
      if (probe.denied !== undefined) return { error: probe.denied };
      if (probe.kind === "dir") return { error: `'${path}' is a directory; give the path of a file inside it.` };
      if (probe.kind === "special")
        return { error: `'${path}' is not a regular file (a device, FIFO or socket); refusing to replace it.` };
      const style =
        probe.kind === "file" ? matchFileStyle(content, probe.existing) : { text: content, crlf: false, bom: false };
      const bytes = Buffer.from(style.text, "utf8");
      const written = await writeAtomic(session, probe.resolved, bytes, { mode: probe.mode, signal });
      const result: ToolResult = { path, bytes_written: written.bytesWritten, dirs_created: !probe.parentExists };
      if (probe.resolved !== path) result.resolved_path = probe.resolved;
      if (style.crlf) result.line_endings = "CRLF (kept from the existing file)";
      if (style.bom) result.bom = "kept from the existing file";
      return result;
    },
  });
}

export const writeFileTool = createWriteFileTool();
