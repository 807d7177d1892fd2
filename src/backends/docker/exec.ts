/**
 * One `docker exec` through the Engine API, as a ProcessHandle.
 *
 * The engine is slow to tell that an exec exited when a backgrounded child
 * still holds its output: it waits seconds for the stream to drain, and exit
 * notices of later execs in the same container queue up behind it (measured:
 * 2-6 s). So the command runs under a small `sh` that waits for it and
 * prints its exit code on the exec's stderr stream, which the wrapper itself
 * never writes to after its first line (`exec 2>&1`). The engine's own exit
 * code is the fallback when that line never comes (the process or the
 * container was killed).
 */

import { randomBytes } from "node:crypto";
import type { Socket } from "node:net";
import { PassThrough, type Duplex } from "node:stream";
import type { ProcessHandle } from "../../core/transport.js";
import { ApiError, MultiplexDecoder, type EngineApi } from "./engine.js";

export interface ExecRequest {
  containerId: string;
  cmd: string[];
  /** Run cmd under a waiting `sh` that reports its exit code in-band (see above). */
  reportExit?: boolean;
  /** `NAME=value` entries; sent in the request body over the socket, never on a command line. */
  env?: string[] | undefined;
  stdin?: Uint8Array | undefined;
  /**
   * Hand the command's stderr back apart (the handle's `stderr`). With reportExit, the command's own
   * stderr then shares the exec's stderr stream with the waiter's exit line, which is keyed by a
   * nonce the waiter reads from stdin first (the command never sees it), so no command can forge it.
   */
  separateStreams?: boolean | undefined;
}

/** The line the waiting `sh` prints on stderr when the command exits. */
const EXIT_TAG = "\n__SHELLWRIGHT_EXIT__";
/**
 * The waiter runs the command in a session of its own when `setsid` exists,
 * so the command's process group (the unit a timeout kills) excludes the
 * waiter. The waiter's own stderr is /dev/null (sh reports a child killed by a
 * signal there); the command gets the real one back in its subshell.
 */
const WAITER =
  `exec 3>&2 2>/dev/null; (exec 2>&3 3>&-; if command -v setsid >/dev/null; then exec setsid "$@"; else exec "$@"; fi); ` +
  `printf '${EXIT_TAG.replace("\n", "\\n")}%d__\\n' "$?" >&3`;
/** The same, for a command whose stderr is its own: the exit line carries the nonce read from stdin's first line. */
const KEYED_WAITER =
  `IFS= read -r __k; exec 3>&2 2>/dev/null; (exec 2>&3 3>&-; if command -v setsid >/dev/null; then exec setsid "$@"; else exec "$@"; fi); ` +
  `printf '\\n__SHELLWRIGHT_EXIT_%s_%d__\\n' "$__k" "$?" >&3`;
/** Exit code reported when the engine has none (the process or its container was killed). */
const KILLED = 137;

export function startExec(engine: EngineApi, request: ExecRequest): ProcessHandle {
  const output = new PassThrough();
  const apart = request.separateStreams === true;
  const stderr = apart ? new PassThrough() : undefined;
  const nonce = apart && request.reportExit ? randomBytes(12).toString("hex") : undefined;
  const stdin =
    nonce === undefined ? request.stdin : Buffer.concat([Buffer.from(`${nonce}\n`), request.stdin ?? new Uint8Array()]);
  let socket: Duplex | undefined;
  let execId: string | undefined;
  let killed = false;
  let settled = false;
  let resolveExit!: (code: number) => void;
  let rejectExit!: (error: unknown) => void;
  const exited = new Promise<number>((resolve, reject) => {
    resolveExit = resolve;
    rejectExit = reject;
  });
  // wait() may never be called if the session gives up first: no unhandled rejection.
  exited.catch(() => undefined);

  // After kill() the stream may still flush a last frame: never write past the end.
  const emit = (bytes: Buffer, to: PassThrough = output): void => {
    if (bytes.length > 0 && !to.writableEnded) to.write(bytes);
  };
  const finish = (code: number): void => {
    if (settled) return;
    settled = true;
    // A backgrounded child may keep the stream open: let it, without keeping this process alive.
    (socket as Socket | undefined)?.unref?.();
    resolveExit(code);
  };
  const fail = (error: unknown): void => {
    if (settled) return;
    settled = true;
    output.end();
    stderr?.end();
    rejectExit(error);
  };

  /** True once the engine says the process exited. */
  const poll = async (): Promise<boolean> => {
    const response = await engine.request("GET", `/exec/${execId}/json`);
    if (response.status !== 200) throw new ApiError(response.status, response.text, `/exec/${execId}/json`);
    const info = response.json as { Running?: boolean; ExitCode?: number | null };
    if (info.Running !== false) return false;
    finish(typeof info.ExitCode === "number" ? info.ExitCode : KILLED);
    return true;
  };
  const pollUntilExit = async (): Promise<void> => {
    // The stream ended; the engine may take a moment to record the exit.
    for (let attempt = 0; !settled && !killed; attempt++) {
      if (await poll()) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(10 * 2 ** attempt, 500)));
    }
  };

  void (async () => {
    const body = {
      AttachStdin: stdin !== undefined,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      Cmd: request.reportExit
        ? ["sh", "-c", nonce === undefined ? WAITER : KEYED_WAITER, "shellwright", ...request.cmd]
        : request.cmd,
      ...(request.env === undefined || request.env.length === 0 ? {} : { Env: request.env }),
    };
    const created = await engine.request("POST", `/containers/${request.containerId}/exec`, body);
    if (created.status !== 201)
      throw new ApiError(created.status, created.text, `/containers/${request.containerId}/exec`);
    execId = (created.json as { Id: string }).Id;
    if (killed) return;
    const stream = await engine.startExec(execId);
    socket = stream;
    if (killed) {
      stream.destroy();
      return;
    }
    const decoder = new MultiplexDecoder();
    const exitLine = new ExitLineScanner(nonce);
    stream.on("data", (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) {
        const to = frame.stream === 2 && stderr !== undefined ? stderr : output;
        if (frame.stream !== 2 || !request.reportExit) {
          emit(frame.payload, to);
          continue;
        }
        emit(exitLine.push(frame.payload), to);
        if (exitLine.code !== undefined) finish(exitLine.code);
      }
    });
    stream.on("error", () => undefined); // the end decides
    stream.once("close", () => {
      emit(exitLine.flush(), stderr ?? output);
      output.end();
      stderr?.end();
      if (!killed) pollUntilExit().catch(fail);
    });
    if (stdin !== undefined) stream.end(Buffer.from(stdin.buffer, stdin.byteOffset, stdin.length));
  })().catch(fail);

  return {
    output,
    ...(stderr === undefined ? {} : { stderr }),
    wait: () => exited,
    kill: () => {
      killed = true;
      socket?.destroy();
      output.end();
      stderr?.end();
      finish(KILLED);
    },
  };
}

/**
 * Finds the waiter's exit line in the stderr stream and strips it; anything
 * else on stderr (bash's own start-up errors) is passed on, byte for byte.
 * The line is one write of a few bytes, so it normally arrives whole in one
 * frame; a tail that may be its start ("\n_…") is held back all the same,
 * but never a lone newline, which would delay ordinary stderr lines.
 */
export class ExitLineScanner {
  #held: Buffer = Buffer.alloc(0);
  readonly #tag: string;
  readonly #line: RegExp;
  readonly #partial: RegExp;
  code: number | undefined;

  /** `nonce`: the exit line is the keyed one (KEYED_WAITER): an unkeyed line is the command's own text. */
  constructor(nonce?: string) {
    const name = nonce === undefined ? "__SHELLWRIGHT_EXIT__" : `__SHELLWRIGHT_EXIT_${nonce}_`;
    this.#tag = `\n${name}`;
    this.#line = new RegExp(`\\n?${name}(\\d+)__\\n`);
    this.#partial = new RegExp(`^\\n${name}\\d*_{0,2}$`);
  }

  push(payload: Buffer): Buffer {
    if (this.code !== undefined) return payload;
    const data = this.#held.length > 0 ? Buffer.concat([this.#held, payload]) : payload;
    this.#held = Buffer.alloc(0);
    const text = data.toString("latin1"); // one char per byte: indexes match
    const match = this.#line.exec(text);
    if (match) {
      this.code = Number(match[1]);
      return Buffer.concat([data.subarray(0, match.index), data.subarray(match.index + match[0].length)]);
    }
    const lastNewline = text.lastIndexOf("\n");
    const tail = lastNewline < 0 ? "" : text.slice(lastNewline);
    if (tail.length >= 2 && (this.#tag.startsWith(tail) || this.#partial.test(tail))) {
      this.#held = data.subarray(lastNewline);
      return data.subarray(0, lastNewline);
    }
    return data;
  }

  flush(): Buffer {
    const rest = this.#held;
    this.#held = Buffer.alloc(0);
    return rest;
  }
}
