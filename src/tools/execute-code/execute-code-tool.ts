/**
 * execute_code: runs a Python script on the backend that can call the other
 * tools through a small generated client library (`shellwright_tools`).
 *
 * Everything goes through the session, so it works on every backend. The
 * script and the host talk over two FIFOs in a private temp directory inside
 * the backend. A "pump" command, run by the host through the session, first
 * writes the previous call's response into `res` and then blocks on `req`
 * until the script's next request arrives, which it prints. So each tool call
 * from the script costs exactly one round trip (the Python system polls
 * request files with about four commands per call), and nothing polls.
 *
 * The script and the plumbing run as isolated commands: they see the
 * session's env and cwd but never change them, so the terminal's cwd is where
 * it was (tools the script calls, such as terminal, still act on the session).
 */

import { z } from "zod";
import type { Environment } from "../../core/environment.js";
import {
  defineTool,
  inputJsonSchema,
  runTool,
  type ToolDefinition,
  type ToolResult,
} from "../shared/tool-definition.js";
import { parseFramed, runOnBackend, shellQuote } from "../shared/backend-io.js";
import { BOOTSTRAP_SOURCE, buildClientLibrary } from "./python-client.js";

export interface ExecuteCodeToolOptions {
  /** The tools the script may call. */
  tools: readonly ToolDefinition[];
  /** @default 50 */
  maxToolCalls?: number;
  /** Limit for the whole script. @default 300000 */
  timeoutMs?: number;
  /** The Python interpreter on the backend. @default "python3" */
  python?: string;
}

const schema = z
  .object({
    code: z
      .string()
      .describe(
        "Python 3 source to run. The tools are plain functions (already imported; also `from shellwright_tools import …`) that return dicts.",
      ),
  })
  // Unknown arguments are refused (runTool names them): one ignored silently could change what the call does.
  .strict();

interface RpcRequest {
  tool?: unknown;
  args?: unknown;
}

/** The pump found the channel's directory removed: the script's command is over or ending. */
const CHANNEL_GONE = Symbol("channel gone");
/** The pump's exit status for CHANNEL_GONE. */
const GONE_STATUS = 3;

/** How long the pump may wait for a request: as long as the script may run. */
const PUMP_SLACK_MS = 5000;

export function createExecuteCodeTool(options: ExecuteCodeToolOptions): ToolDefinition<typeof schema> {
  const maxToolCalls = options.maxToolCalls ?? 50;
  const timeoutMs = options.timeoutMs ?? 300_000;
  const python = options.python ?? "python3";
  const byName = new Map(options.tools.map((tool) => [tool.name, tool]));
  const library = buildClientLibrary(
    options.tools.map((tool) => ({ name: tool.name, description: tool.description, schema: inputJsonSchema(tool) })),
  );
  const names = [...byName.keys()].join(", ");

  return defineTool({
    name: "execute_code",
    description:
      "Run a Python 3 script on the backend that can call tools as functions " +
      `(${names || "none"}), each returning the tool's result as a dict. Use it to chain many tool calls or process their results in code. ` +
      `Limits: ${Math.round(timeoutMs / 1000)} s, ${maxToolCalls} tool calls per script; output (stdout and stderr) keeps its head and tail when long. ` +
      "The script runs in the terminal's current directory and does not change it. Print what you need: only the output comes back.",
    inputSchema: schema,
    async handler({ code }, context): Promise<ToolResult> {
      const { session, signal, onOutput } = context;
      const started = performance.now();
      const seconds = (): number => Math.round((performance.now() - started) / 10) / 100;
      if (code.trim() === "") return { error: "No code provided." };

      const interrupted = (): ToolResult => ({
        status: "interrupted",
        output: "",
        tool_calls_made: 0,
        duration_seconds: seconds(),
      });
      if (signal?.aborted) return interrupted();
      const setup = await runOnBackend(
        session,
        [
          `command -v ${shellQuote(python)} >/dev/null 2>&1 || { echo 'python missing'; exit 0; }`,
          `__sw_d=$(mktemp -d "\${TMPDIR:-/tmp}/shellwright-code.XXXXXX") || exit 1`,
          `mkfifo -m 600 "$__sw_d/req" "$__sw_d/res" || exit 1`,
          `cat > "$__sw_d/bundle.json" || exit 1`,
          `printf 'dir %s\\n' "$__sw_d"`,
        ].join("\n"),
        { stdin: JSON.stringify({ library, script: code }), cwd: "/", signal },
      ).catch((error: unknown) => {
        if (signal?.aborted) return undefined;
        throw error;
      });
      if (setup === undefined) return interrupted();
      const { fields, lines } = parseFramed(setup.stdout);
      if (lines[0] === "python missing") {
        return {
          status: "error",
          error: `Python 3 is not available on the ${session.backend} backend (no ${python}). Install it there or use the tools directly.`,
          tool_calls_made: 0,
          duration_seconds: 0,
        };
      }
      const dir = fields.get("dir");
      if (setup.exitCode !== 0 || dir === undefined)
        throw new Error(
          `could not prepare the script on the backend: ${setup.stderr.trim() || `exit code ${setup.exitCode}`}`,
        );

      const q = shellQuote(dir);
      // Stopped by the caller, or by us when the tool-call channel breaks (the script would wait on it forever).
      const stopMain = new AbortController();
      const mainSignal = signal === undefined ? stopMain.signal : AbortSignal.any([signal, stopMain.signal]);
      const main = session.execute(
        `SHELLWRIGHT_RPC_DIR=${q} PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PYTHONUTF8=1 ${shellQuote(python)} -c ${shellQuote(BOOTSTRAP_SOURCE)} ${q}; __sw_rc=$?; rm -rf ${q}; (exit $__sw_rc)`,
        { isolated: true, timeoutMs, signal: mainSignal, ...(onOutput === undefined ? {} : { onOutput }) },
      );
      const rpc = new RpcPump(session, dir, timeoutMs + PUMP_SLACK_MS, signal);
      let calls = 0;
      let finished = false;
      const mainDone = main.finally(() => {
        finished = true;
      });
      let response: string | undefined;
      let channelBroken = false;
      try {
        while (!finished) {
          const request = await Promise.race([rpc.next(response), mainDone.then(() => undefined)]);
          // The script's own command removed the channel: it ended (or is ending) by itself, and no
          // request can come any more. Not a broken channel: its result is whatever it returns.
          if (request === CHANNEL_GONE) break;
          if (request === undefined) {
            if (!finished && !signal?.aborted) {
              channelBroken = true;
              stopMain.abort();
            }
            break;
          }
          calls++;
          response = JSON.stringify(await dispatch(request, calls));
        }
      } finally {
        rpc.stop();
      }
      const result = await main;
      await rpc.settled();

      const out: ToolResult = {
        status: "success",
        output: result.output,
        tool_calls_made: calls,
        duration_seconds: seconds(),
      };
      if (result.timedOut) {
        out.status = "timeout";
        out.error = `Script timed out after ${Math.round(timeoutMs / 1000)}s and was killed.`;
        await session.execute(`rm -rf ${q}`, { isolated: true, cwd: "/" }).catch(() => undefined);
      } else if (result.interrupted) {
        out.status = "interrupted";
        if (channelBroken) out.error = "The tool-call channel to the script failed; the script was stopped.";
        await session.execute(`rm -rf ${q}`, { isolated: true, cwd: "/" }).catch(() => undefined);
      } else if (result.exitCode !== 0) {
        out.status = "error";
        out.error = `Script exited with code ${result.exitCode}`;
      }
      return out;

      async function dispatch(request: RpcRequest, number: number): Promise<ToolResult> {
        if (number > maxToolCalls)
          return { error: `Tool call limit reached (${maxToolCalls}). No more tool calls allowed in this execution.` };
        const tool = typeof request.tool === "string" ? byName.get(request.tool) : undefined;
        if (!tool)
          return { error: `Tool '${String(request.tool)}' is not available in execute_code. Available: ${names}` };
        // The caller's whole context (limits, hooks) applies to the script's calls too, except
        // redaction: the script gets real data (a file it reads and writes back must not come
        // back masked); what it prints is masked when execute_code's own result is.
        const { settings } = context;
        return runTool(tool, request.args ?? {}, { ...context, settings: { ...settings, redactSecrets: false } });
      }
    },
  });
}

/** The host side of the FIFO pair: one session command per request. */
class RpcPump {
  readonly #session: Environment;
  readonly #dir: string;
  readonly #timeoutMs: number;
  readonly #controller = new AbortController();
  #running: Promise<unknown> = Promise.resolve();

  constructor(session: Environment, dir: string, timeoutMs: number, signal: AbortSignal | undefined) {
    this.#session = session;
    this.#dir = dir;
    this.#timeoutMs = timeoutMs;
    signal?.addEventListener("abort", () => this.#controller.abort(), { once: true });
  }

  /**
   * Delivers the previous response (if any) and waits for the next request;
   * undefined when stopped or failed, CHANNEL_GONE when the directory is gone.
   * The script's command removes the directory as it ends, which can happen
   * before this command opens `req` (a slow start under load): that is the
   * script finishing, not the channel breaking. `rm -rf` unlinks the FIFOs
   * before the directory, so a missing `req` already means it is going.
   */
  next(response: string | undefined): Promise<RpcRequest | undefined | typeof CHANNEL_GONE> {
    const q = shellQuote(this.#dir);
    const gone = `{ [ -p ${q}/req ] || exit ${GONE_STATUS}; exit 1; }`;
    const producer = `${response === undefined ? "" : `cat > ${q}/res || ${gone}\n`}cat ${q}/req || ${gone}`;
    const run = runOnBackend(this.#session, producer, {
      cwd: "/",
      timeoutMs: this.#timeoutMs,
      signal: this.#controller.signal,
      ...(response === undefined ? {} : { stdin: response }),
    });
    this.#running = run.catch(() => undefined);
    return run.then(
      (result) => {
        if (result.exitCode === GONE_STATUS) return CHANNEL_GONE;
        if (result.exitCode !== 0) return undefined;
        try {
          return JSON.parse(result.stdout.toString("utf8")) as RpcRequest;
        } catch {
          return { tool: undefined };
        }
      },
      () => undefined,
    );
  }

  /** Ends a pump still waiting (the script finished or was killed). */
  stop(): void {
    this.#controller.abort();
  }

  settled(): Promise<unknown> {
    return this.#running;
  }
}
