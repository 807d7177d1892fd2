/**
 * search_files: content search (ripgrep, or grep where rg is missing) and file
 * search (`rg --files`, or find), run on the backend in one round trip. The
 * whole result stays in a temp file inside the backend; only the requested
 * page travels, and the total is counted there, so it is the true total.
 * Results are sorted by path, so pages are stable from call to call.
 */

import { z } from "zod";
import type { Redactor } from "../../core/redact.js";
import { redactorFor } from "../shared/redaction.js";
import { defineTool, type ToolDefinition, type ToolResult } from "../shared/tool-definition.js";
import { parseFramed, quotePath, runOnBackend, shellQuote } from "../shared/backend-io.js";

export interface SearchFilesToolOptions {
  /**
   * Which programs to use: "auto" prefers ripgrep and falls back to grep/find; "fallback" always uses grep/find.
   * @default "auto"
   */
  engine?: "auto" | "fallback";
}

export const MATCH_CONTENT_CHARS = 500;
/** Bytes kept per output line on the backend before the page travels (a minified file can match with a 5 MB line). */
const LINE_BYTES = 4000;
/** With context lines the page is cut on our side; this bounds what travels. */
const CONTEXT_TRANSFER_BYTES = 2_000_000;

const target = z.preprocess(
  (value) => (value === "grep" ? "content" : value === "find" ? "files" : value),
  z.enum(["content", "files"]).default("content"),
);

const schema = z
  .object({
    pattern: z
      .string()
      .min(1)
      .describe(
        "target='content': a regular expression to find in files. target='files': a glob for file names, such as '*.py' or 'src/**/*.ts'.",
      ),
    target: target.describe("content: search inside files (grep). files: find files by name (find)."),
    path: z
      .string()
      .min(1)
      .default(".")
      .describe("Directory or file to search; relative paths start at the terminal's current directory."),
    file_glob: z
      .string()
      .optional()
      .describe("target='content': only search files whose names match this glob, such as '*.ts'."),
    limit: z.number().int().min(1).max(1000).default(50).describe("Results per page."),
    offset: z.number().int().min(0).default(0).describe("Results to skip, for the next page."),
    output_mode: z
      .enum(["content", "files_only", "count"])
      .default("content")
      .describe("target='content': matching lines, only the names of matching files, or match counts per file."),
    context: z
      .number()
      .int()
      .min(0)
      .max(20)
      .default(0)
      .describe("target='content', output_mode='content': lines of context around each match."),
  })
  // Unknown arguments are refused (runTool names them): one ignored silently could change what the call does.
  .strict();

type Input = z.infer<typeof schema>;

interface Plan {
  rg: string;
  fallback: string;
  fallbackName: string;
  /** How the total is counted and the page cut, from the result file "$__sw_o". */
  paging: "lines" | "context";
}

function buildPlan(input: Input): Plan {
  const path = quotePath(input.path);
  const pattern = shellQuote(input.pattern);
  const cut = `| cut -b 1-${LINE_BYTES}`;
  // A -g glob overrides ripgrep's hidden-file rule; skip dot files again unless the glob asks for them.
  const hidden = (glob: string | undefined): boolean => glob !== undefined && /(^|\/)\./.test(glob);
  if (input.target === "files") {
    const slash = input.pattern.includes("/");
    // ripgrep anchors a glob with a slash in an odd place when the search path is absolute; match at any depth instead.
    const rgGlob =
      slash && !input.pattern.startsWith("**/") ? shellQuote(`**/${input.pattern.replace(/^\//, "")}`) : pattern;
    return {
      rg: `rg --files --sort=path --color=never -g ${rgGlob}${hidden(input.pattern) ? " --hidden" : ` -g '!.*'`} -- ${path}`,
      fallback: `find ${path} -type f${hidden(input.pattern) ? "" : ` -not -path '*/.*'`} ${slash ? `-path ${shellQuote(`*/${input.pattern.replace(/^\*\*\//, "")}`)}` : `-name ${pattern}`} | LC_ALL=C sort`,
      fallbackName: "find",
      paging: "lines",
    };
  }
  const glob = input.file_glob === undefined ? "" : shellQuote(input.file_glob);
  const rgGlobs = glob ? ` --glob ${glob}${hidden(input.file_glob) ? " --hidden" : ` --glob '!.*'`}` : "";
  const rgBase = `rg --color=never --sort=path --no-heading --with-filename --line-number --null${rgGlobs}`;
  // GNU grep applies --exclude-dir to the directory named on the command line too: searching inside ~/.config must work.
  const hiddenRoot = /(^|\/)\.[^./][^/]*\/?$/.test(input.path);
  const skipHidden = hidden(input.file_glob) ? "" : `${hiddenRoot ? "" : ` --exclude-dir='.[!.]*'`} --exclude='.*'`;
  // --include before --exclude: GNU grep includes a file that matches neither only when the first of them is --include.
  const grep = (flags: string): string => `grep -rHIZE${flags}${glob ? ` --include=${glob}` : ""}${skipHidden}`;
  const grepBase = grep("");
  if (input.output_mode === "files_only") {
    return {
      rg: `${rgBase} -l -e ${pattern} -- ${path} | tr '\\0' '\\n'`,
      fallback: `${grepBase} -l -e ${pattern} -- ${path} | tr '\\0' '\\n' | LC_ALL=C sort`,
      fallbackName: "grep",
      paging: "lines",
    };
  }
  if (input.output_mode === "count") {
    // grep -c lists files without matches too: drop the ones that count 0.
    return {
      rg: `${rgBase} -c -e ${pattern} -- ${path}`,
      fallback: `${grepBase} -c -e ${pattern} -- ${path} | tr '\\0' '\\1' | LC_ALL=C grep -av $'\\1''0$' | LC_ALL=C sort | tr '\\1' '\\0'`,
      fallbackName: "grep",
      paging: "lines",
    };
  }
  const context = input.context > 0 ? ` -C ${input.context}` : "";
  // grep -r walks in directory order: sort by path (stable, so each file's lines keep their order).
  const byPath = `| tr '\\0' '\\1' | LC_ALL=C sort -s -t $'\\1' -k1,1 | tr '\\1' '\\0'`;
  return {
    rg: `${rgBase}${context} -e ${pattern} -- ${path} ${cut}`,
    fallback: `${grep("n")}${context} -e ${pattern} -- ${path} ${byPath} ${cut}`,
    fallbackName: "grep",
    paging: input.context > 0 ? "context" : "lines",
  };
}

function buildProducer(input: Input, plan: Plan, useRipgrep: boolean): string {
  const first = input.offset + 1;
  const last = input.offset + input.limit;
  // A pipeline's status is its last command's; the search's own status decides (exit 2 = error).
  const run = (command: string) =>
    `set -o pipefail; ${command} > "$__sw_o" 2> "$__sw_o.e"; __sw_rc=$?; set +o pipefail`;
  const lines = [
    `__sw_p=${quotePath(input.path)}`,
    `if [ ! -e "$__sw_p" ]; then echo 'kind missing'; exit 0; fi`,
    `__sw_o=$(mktemp) || exit 1`,
    useRipgrep
      ? `if command -v rg >/dev/null 2>&1; then __sw_e=rg; ${run(plan.rg)}; else __sw_e=${plan.fallbackName}; ${run(plan.fallback)}; fi`
      : `__sw_e=${plan.fallbackName}; ${run(plan.fallback)}`,
    plan.paging === "lines"
      ? `__sw_t=$(wc -l < "$__sw_o")`
      : `__sw_t=$(tr '\\0' '\\1' < "$__sw_o" | LC_ALL=C grep -ac $'\\1''[0-9][0-9]*:')`,
    `printf 'kind ok\\nengine %s\\nrc %s\\ntotal %s\\nstderr %s\\n--\\n' "$__sw_e" "$__sw_rc" "$__sw_t" "$(head -c 600 "$__sw_o.e" | tr '\\n' ' ')"`,
    plan.paging === "lines"
      ? `sed -n '${first},${last}p;${last}q' "$__sw_o"`
      : `head -c ${CONTEXT_TRANSFER_BYTES} "$__sw_o"`,
    `rm -f "$__sw_o" "$__sw_o.e"`,
  ];
  return lines.join("\n");
}

interface SearchRecord {
  path: string;
  line: number;
  content: string;
  isMatch: boolean;
}

/** `path\0N:content` (a match) or `path\0N-content` (context); `--` separators are skipped. */
function parseRecords(text: string, redactor: Redactor | undefined): SearchRecord[] {
  const records: SearchRecord[] = [];
  for (const raw of text.split("\n")) {
    const nul = raw.indexOf("\0");
    if (nul === -1) continue;
    const rest = /^(\d+)([:-])(.*)$/s.exec(raw.slice(nul + 1));
    if (!rest) continue;
    // Masked before the cut, so that a cut never leaves half a secret.
    const line = rest[3]!.replace(/\r$/, "");
    const content = redactor === undefined ? line : redactor.redact(line);
    records.push({
      path: raw.slice(0, nul),
      line: Number(rest[1]),
      content: content.length > MATCH_CONTENT_CHARS ? `${content.slice(0, MATCH_CONTENT_CHARS)}...` : content,
      isMatch: rest[2] === ":",
    });
  }
  return records;
}

/** The page's matches plus, from the same file, the context lines within `context` lines of one of them. */
function pageWithContext(records: SearchRecord[], offset: number, limit: number, context: number): SearchRecord[] {
  const matches = records.filter((r) => r.isMatch);
  const chosen = new Set(matches.slice(offset, offset + limit));
  const near = (r: SearchRecord): boolean =>
    [...chosen].some((m) => m.path === r.path && Math.abs(m.line - r.line) <= context);
  const seen = new Set<string>();
  return records.filter((r) => {
    const keep = r.isMatch ? chosen.has(r) : near(r);
    const key = `${r.path}\0${r.line}`;
    if (!keep || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function createSearchFilesTool(options: SearchFilesToolOptions = {}): ToolDefinition<typeof schema> {
  const useRipgrep = (options.engine ?? "auto") === "auto";
  return defineTool({
    name: "search_files",
    description:
      "Search file contents (target='content', a regular expression; ripgrep, or grep where it is missing) or find files by name " +
      "(target='files', a glob such as '*.py'). Filter with file_glob, show context lines, or list only matching files or counts (output_mode). " +
      "Results are sorted by path and paginated: total_count is the true total, use offset to get the next page. " +
      "Hidden files and directories are skipped (ripgrep also skips .gitignored files).",
    inputSchema: schema,
    async handler(input, context): Promise<ToolResult> {
      const { session, signal } = context;
      const plan = buildPlan(input);
      const result = await runOnBackend(session, buildProducer(input, plan, useRipgrep), { signal });
      const { fields, body } = parseFramed(result.stdout);
      if (fields.get("kind") === "missing")
        return { error: `Path not found: ${input.path}. Verify the path exists (use 'terminal' to check).` };
      if (result.exitCode !== 0 || fields.get("kind") !== "ok")
        return { error: `Search failed: ${result.stderr.trim() || `exit code ${result.exitCode}`}` };
      const rc = Number(fields.get("rc"));
      const total = Number(fields.get("total") ?? 0);
      if (rc >= 2 && total === 0)
        return {
          error: `Search failed: ${(fields.get("stderr") ?? "").trim() || `${fields.get("engine")} exited with ${rc}`}`,
        };

      const text = body.toString("utf8");
      const relative = (path: string): string => (input.path === "." && path.startsWith("./") ? path.slice(2) : path);
      const out: ToolResult = { total_count: total };
      if (input.target === "files") {
        out.files = text.split("\n").filter(Boolean).map(relative);
      } else if (input.output_mode === "files_only") {
        out.files = text
          .split("\n")
          .filter(Boolean)
          .map((line) => relative(line.replace(/\0$/, "")));
      } else if (input.output_mode === "count") {
        const counts: { [path: string]: number } = {};
        for (const line of text.split("\n")) {
          const nul = line.indexOf("\0");
          if (nul !== -1) counts[relative(line.slice(0, nul))] = Number(line.slice(nul + 1));
        }
        out.counts = counts;
      } else {
        let records = parseRecords(text, redactorFor(context));
        if (plan.paging === "context") records = pageWithContext(records, input.offset, input.limit, input.context);
        out.matches = records.map((r) => ({
          path: relative(r.path),
          line: r.line,
          content: r.content,
          ...(plan.paging === "context" && !r.isMatch ? { context: true } : {}),
        }));
      }
      const shown = input.offset + input.limit;
      if (total > shown) {
        out.truncated = true;
        out.hint = `Results truncated. Use offset=${shown} to see more, or narrow with a more specific pattern or file_glob.`;
      }
      out.engine = fields.get("engine");
      return out;
    },
  });
}

export const searchFilesTool = createSearchFilesTool();
