/**
 * A Shellwright session as the AI SDK's sandbox (`Experimental_SandboxSession`
 * of `ai` 7): run, spawn, and file reads and writes, on any backend.
 *
 * The AI SDK's contract is stateless where Shellwright's session is not: every
 * command starts in the same base directory (the session's cwd when the
 * adapter was made) and a `cd` or `export` inside it does not carry over. So
 * every call here is an `isolated` execute from that directory; the agent's
 * own terminal session, if it shares the Session, is left untouched.
 *
 * Differences from a raw process, each forced by the session model:
 * stdout and stderr are kept to the session's output limit (head and tail,
 * with the cut said inline) like every Shellwright command; stderr arrives
 * when the command ends (it is captured in a file so it stays separate from
 * stdout); `spawn` cannot keep stdin open (it rejects `stdin: true` before
 * starting anything, as the contract allows).
 */

import { randomBytes } from "node:crypto";
import type {
  Experimental_SandboxDirectoryEntry,
  Experimental_SandboxFileStat,
  Experimental_SandboxProcess,
  Experimental_SandboxSession,
} from "ai";
import { InvalidOptionError } from "../core/errors.js";
import { describe, plainObject, rejectUnknown, shellString, stringRecord } from "../core/options.js";
import { shellQuote } from "../core/script.js";
import type { Environment, ExecuteResult } from "../core/environment.js";
import { runOnBackend } from "../tools/shared/backend-io.js";

export interface SandboxAdapterOptions {
  /** Shown to the model as the sandbox's description. @default says the backend, the base directory and the shell */
  description?: string;
}

type RunOptions = Parameters<Experimental_SandboxSession["run"]>[0];
type SpawnOptions = Parameters<Experimental_SandboxSession["spawn"]>[0];
type PathOptions = { path: string; abortSignal?: AbortSignal };

/** Exit codes of the file producers below, for the outcomes the contract names. */
const MISSING = 20;
const IS_DIRECTORY = 21;
const NOT_DIRECTORY = 22;

export function createSandboxSession(
  session: Environment,
  options: SandboxAdapterOptions = {},
): Experimental_SandboxSession {
  rejectUnknown("createSandboxSession", plainObject("options", options), ["description"]);
  const base = session.cwd;
  const description =
    options.description === undefined
      ? `A bash shell on the Shellwright ${session.backend} backend. Commands start in ${base}; relative paths resolve there. A cd or export inside a command lasts for that command only.`
      : shellString("description", options.description);

  /** Runs a file producer from the base directory; rejects with the abort reason when aborted. */
  const io = async (producer: string, path: string, signal: AbortSignal | undefined, stdin?: Uint8Array) => {
    signal?.throwIfAborted();
    const result = await runOnBackend(session, producer, {
      cwd: base,
      signal,
      ...(stdin === undefined ? {} : { stdin }),
    }).catch((error: unknown) => {
      signal?.throwIfAborted();
      throw error;
    });
    if (result.exitCode === IS_DIRECTORY) throw new Error(`${path} is a directory`);
    if (result.exitCode === NOT_DIRECTORY) throw new Error(`${path} is not a directory`);
    if (result.exitCode !== 0 && result.exitCode !== MISSING) {
      throw new Error(`${path}: ${result.stderr.trim() || `the backend's exit code was ${result.exitCode}`}`);
    }
    return result;
  };

  const readBinaryFile = async ({ path, abortSignal }: PathOptions): Promise<Uint8Array | null> => {
    const p = pathWord(path);
    const result = await io(
      `[ -e ${p} ] || exit ${MISSING}; [ -d ${p} ] && exit ${IS_DIRECTORY}; cat -- ${p}`,
      path,
      abortSignal,
    );
    return result.exitCode === MISSING ? null : new Uint8Array(result.stdout);
  };

  const writeBinaryFile = async ({
    path,
    content,
    abortSignal,
  }: PathOptions & { content: Uint8Array }): Promise<void> => {
    const p = pathWord(path);
    const producer = `[ -d ${p} ] && exit ${IS_DIRECTORY}; mkdir -p -- "$(dirname -- ${p})" || exit 1; cat > ${p}`;
    await io(producer, path, abortSignal, content);
  };

  const run: Experimental_SandboxSession["run"] = async (runOptions) => {
    const command = commandPlan(runOptions, "run");
    const out = await session.execute(command.script, command.executeOptions(base, runOptions.abortSignal));
    const stderr = await command.collectStderr(session, base);
    runOptions.abortSignal?.throwIfAborted();
    return { exitCode: out.exitCode, stdout: out.output, stderr };
  };

  const spawn = (async (spawnOptions: SpawnOptions) => {
    if ((spawnOptions as { stdin?: unknown }).stdin === true) {
      throw new InvalidOptionError(
        "stdin",
        "spawn with stdin: true is not supported: a Shellwright command gets its stdin whole when it starts. Pass the input in the command (a heredoc or a file) instead.",
      );
    }
    const command = commandPlan(spawnOptions, "spawn");
    return spawnProcess(session, base, command, spawnOptions.abortSignal);
    // The cast: the stdin: true overload always rejects above, so no writable process is ever returned.
  }) as unknown as Experimental_SandboxSession["spawn"];

  return {
    description,
    run,
    spawn,
    readBinaryFile,
    readFile: async (options) => {
      const bytes = await readBinaryFile(options);
      return bytes === null ? null : streamOf(bytes);
    },
    readTextFile: async ({ encoding = "utf-8", startLine, endLine, ...options }) => {
      const decoder = textDecoder(encoding);
      const range = lineRange(startLine, endLine);
      const bytes = await readBinaryFile(options);
      if (bytes === null) return null;
      const text = decoder.decode(bytes);
      return range === undefined ? text : linesOf(text, range.start, range.end);
    },
    writeBinaryFile,
    writeFile: async ({ content, ...options }) => writeBinaryFile({ ...options, content: await bytesOf(content) }),
    writeTextFile: async ({ content, encoding = "utf-8", ...options }) => {
      if (typeof content !== "string")
        throw new InvalidOptionError("content", `content must be a string, got ${describe(content)}`);
      return writeBinaryFile({ ...options, content: encodeText(content, encoding) });
    },
    stat: async ({ path, abortSignal }) => {
      const p = pathWord(path);
      const producer = `[ -e ${p} ] || exit ${MISSING}; if [ -d ${p} ]; then echo directory 0; elif [ -f ${p} ]; then printf 'file %s\\n' "$(stat -L -c %s -- ${p} 2>/dev/null || wc -c < ${p})"; else echo other 0; fi`;
      const result = await io(producer, path, abortSignal);
      if (result.exitCode === MISSING) return null;
      const [type, size] = result.stdout.toString("utf8").trim().split(/\s+/);
      return { type: type as Experimental_SandboxFileStat["type"], size: Number(size) };
    },
    listDirectory: async ({ path, abortSignal }) => {
      const p = pathWord(path);
      const producer = [
        `[ -e ${p} ] || exit ${MISSING}; [ -d ${p} ] || exit ${NOT_DIRECTORY}; cd -- ${p} || exit 1`,
        "shopt -s nullglob dotglob",
        `for __sw_e in *; do if [ -L "$__sw_e" ]; then __sw_t=symlink; elif [ -d "$__sw_e" ]; then __sw_t=directory; elif [ -f "$__sw_e" ]; then __sw_t=file; else __sw_t=other; fi; printf '%s/%s\\0' "$__sw_t" "$__sw_e"; done`,
      ].join("\n");
      const result = await io(producer, path, abortSignal);
      if (result.exitCode === MISSING) return null;
      return splitNul(result.stdout).map((entry): Experimental_SandboxDirectoryEntry => {
        const slash = entry.indexOf("/");
        return {
          type: entry.slice(0, slash) as Experimental_SandboxDirectoryEntry["type"],
          name: entry.slice(slash + 1),
        };
      });
    },
    deleteFile: async ({ path, abortSignal }) => {
      const p = pathWord(path);
      const producer = `[ -L ${p} ] || [ -e ${p} ] || exit ${MISSING}; [ -d ${p} ] && [ ! -L ${p} ] && exit ${IS_DIRECTORY}; rm -f -- ${p}`;
      return (await io(producer, path, abortSignal)).exitCode === 0;
    },
  };
}

/** A command for run/spawn: the env arrives on stdin (never on a command line), stderr goes to a file. */
interface CommandPlan {
  script: string;
  executeOptions(
    base: string,
    signal: AbortSignal | undefined,
  ): { isolated: true; cwd: string; stdin?: Uint8Array; signal?: AbortSignal };
  collectStderr(session: Environment, base: string): Promise<string>;
}

function commandPlan(options: RunOptions, method: "run" | "spawn"): CommandPlan {
  const raw = plainObject(`${method} options`, options);
  rejectUnknown(
    method,
    raw,
    method === "spawn"
      ? ["command", "workingDirectory", "env", "abortSignal", "stdin"]
      : ["command", "workingDirectory", "env", "abortSignal"],
  );
  const command = shellString("command", options.command);
  const env = stringRecord("env", options.env);
  const cwd =
    options.workingDirectory === undefined ? undefined : shellString("workingDirectory", options.workingDirectory);
  const errFile = `\${TMPDIR:-/tmp}/shellwright-stderr-${randomBytes(8).toString("hex")}`;
  const names = Object.keys(env);
  const lines: string[] = [];
  if (names.length > 0) {
    lines.push(`while IFS= read -r -d '' __sw_kv; do export "$__sw_kv"; done; unset __sw_kv; exec </dev/null`);
  }
  if (cwd !== undefined) lines.push(`cd -- ${shellQuote(cwd)} || exit 126`);
  lines.push(`{ ${command}\n} 2>"${errFile}"`);
  const stdin =
    names.length === 0 ? undefined : new TextEncoder().encode(names.map((name) => `${name}=${env[name]}\0`).join(""));
  return {
    script: lines.join("\n"),
    executeOptions: (base, signal) => ({
      isolated: true,
      cwd: base,
      ...(stdin === undefined ? {} : { stdin }),
      ...(signal === undefined ? {} : { signal }),
    }),
    collectStderr: async (session, base) => {
      const result = await session.execute(`cat "${errFile}" 2>/dev/null; rm -f "${errFile}"`, {
        isolated: true,
        cwd: base,
      });
      return result.output;
    },
  };
}

function spawnProcess(
  session: Environment,
  base: string,
  command: CommandPlan,
  abortSignal: AbortSignal | undefined,
): Experimental_SandboxProcess {
  const killer = new AbortController();
  const signal = abortSignal === undefined ? killer.signal : AbortSignal.any([killer.signal, abortSignal]);
  const encoder = new TextEncoder();
  let stdoutController!: ReadableStreamDefaultController<Uint8Array>;
  let stderrController!: ReadableStreamDefaultController<Uint8Array>;
  const stdout = new ReadableStream<Uint8Array>({ start: (controller) => void (stdoutController = controller) });
  const stderr = new ReadableStream<Uint8Array>({ start: (controller) => void (stderrController = controller) });

  const done: Promise<ExecuteResult> = (async () => {
    try {
      const result = await session.execute(command.script, {
        ...command.executeOptions(base, signal),
        onOutput: (text) => stdoutController.enqueue(encoder.encode(text)),
      });
      const errors = await command.collectStderr(session, base).catch(() => "");
      if (errors !== "") stderrController.enqueue(encoder.encode(errors));
      stdoutController.close();
      stderrController.close();
      return result;
    } catch (error) {
      stdoutController.error(error);
      stderrController.error(error);
      throw error;
    }
  })();
  done.catch(() => undefined);

  return {
    stdout,
    stderr,
    wait: async () => {
      const result = await done;
      abortSignal?.throwIfAborted();
      return { exitCode: result.exitCode };
    },
    kill: async () => {
      killer.abort();
      await done.catch(() => undefined);
    },
  };
}

function pathWord(path: unknown): string {
  return shellQuote(shellString("path", path));
}

function textDecoder(encoding: unknown): { decode(bytes: Uint8Array): string } {
  try {
    return new TextDecoder(String(encoding));
  } catch {
    throw new InvalidOptionError(
      "encoding",
      `encoding ${describe(encoding)} is not an encoding this runtime can decode`,
    );
  }
}

function encodeText(text: string, encoding: unknown): Uint8Array {
  const name = String(encoding).toLowerCase();
  if (name === "utf-8" || name === "utf8") return new TextEncoder().encode(text);
  if (typeof encoding !== "string" || !Buffer.isEncoding(name)) {
    throw new InvalidOptionError(
      "encoding",
      `encoding ${describe(encoding)} cannot be written; use utf-8, utf-16le, latin1 or ascii`,
    );
  }
  return new Uint8Array(Buffer.from(text, name));
}

function lineRange(startLine: unknown, endLine: unknown): { start: number; end: number } | undefined {
  if (startLine === undefined && endLine === undefined) return undefined;
  for (const [name, value] of [
    ["startLine", startLine],
    ["endLine", endLine],
  ] as const) {
    if (value !== undefined && (typeof value !== "number" || !Number.isInteger(value) || value < 1)) {
      throw new InvalidOptionError(name, `${name} must be a line number from 1, got ${describe(value)}`);
    }
  }
  const start = (startLine as number | undefined) ?? 1;
  const end = (endLine as number | undefined) ?? Infinity;
  if (end < start) throw new InvalidOptionError("endLine", `endLine (${end}) must not be before startLine (${start})`);
  return { start, end };
}

/** Lines start..end (1-based, inclusive), each with its own line ending. */
function linesOf(text: string, start: number, end: number): string {
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  return lines.slice(start - 1, end === Infinity ? undefined : end).join("");
}

function splitNul(bytes: Buffer): string[] {
  const entries: string[] = [];
  let from = 0;
  for (let at = bytes.indexOf(0, from); at !== -1; at = bytes.indexOf(0, from)) {
    entries.push(bytes.subarray(from, at).toString("utf8"));
    from = at + 1;
  }
  return entries;
}

function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (bytes.length > 0) controller.enqueue(bytes);
      controller.close();
    },
  });
}

async function bytesOf(stream: unknown): Promise<Uint8Array> {
  if (!(stream instanceof ReadableStream))
    throw new InvalidOptionError("content", `content must be a ReadableStream of bytes, got ${describe(stream)}`);
  const parts: Uint8Array[] = [];
  for await (const part of stream as ReadableStream<Uint8Array>) parts.push(part);
  return new Uint8Array(Buffer.concat(parts));
}
