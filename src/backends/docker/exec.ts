/**
 * One `docker exec` through the Engine API, as a ProcessHandle.
 *
 * Completion is the process exit, asked of the engine, not the end of the
 * stream: a backgrounded child keeps the stream open (the engine closes it
 * only seconds after the exit). So when output pauses, the exec is inspected
 * once; the wrapper's end marker is its last output, so a command that is done
 * is seen done about IDLE_POLL_MS after it printed the marker.
 */

import type { Socket } from "node:net";
import { PassThrough, type Duplex } from "node:stream";
import type { ProcessHandle } from "../../core/transport.js";
import { ApiError, FrameDecoder, type EngineApi } from "./engine.js";

export interface ExecRequest {
  containerId: string;
  cmd: string[];
  /** `NAME=value` entries; sent in the request body over the socket, never on a command line. */
  env?: string[] | undefined;
  stdin?: Uint8Array | undefined;
}

/** Quiet time after output before the engine is asked whether the process exited. */
const IDLE_POLL_MS = 100;
/** Exit code reported when the engine has none (the process or its container was killed). */
const KILLED = 137;

export function startExec(engine: EngineApi, request: ExecRequest): ProcessHandle {
  const output = new PassThrough();
  let socket: Duplex | undefined;
  let execId: string | undefined;
  let killed = false;
  let settled = false;
  let idleTimer: NodeJS.Timeout | undefined;
  let resolveExit!: (code: number) => void;
  let rejectExit!: (error: unknown) => void;
  const exited = new Promise<number>((resolve, reject) => {
    resolveExit = resolve;
    rejectExit = reject;
  });
  // wait() may never be called if the session gives up first: no unhandled rejection.
  exited.catch(() => undefined);

  const finish = (code: number): void => {
    if (settled) return;
    settled = true;
    clearTimeout(idleTimer);
    // A backgrounded child may keep the stream open: let it, without keeping this process alive.
    (socket as Socket | undefined)?.unref?.();
    resolveExit(code);
  };
  const fail = (error: unknown): void => {
    if (settled) return;
    settled = true;
    clearTimeout(idleTimer);
    output.end();
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
  const armIdlePoll = (): void => {
    clearTimeout(idleTimer);
    if (settled || killed) return;
    idleTimer = setTimeout(() => {
      poll().catch(() => undefined); // the end of the stream decides then
    }, IDLE_POLL_MS);
  };

  void (async () => {
    const body = {
      AttachStdin: request.stdin !== undefined,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      Cmd: request.cmd,
      ...(request.env === undefined || request.env.length === 0 ? {} : { Env: request.env }),
    };
    const created = await engine.request("POST", `/containers/${request.containerId}/exec`, body);
    if (created.status !== 201) throw new ApiError(created.status, created.text, `/containers/${request.containerId}/exec`);
    execId = (created.json as { Id: string }).Id;
    if (killed) return;
    const stream = await engine.startExec(execId);
    socket = stream;
    if (killed) {
      stream.destroy();
      return;
    }
    const decoder = new FrameDecoder();
    stream.on("data", (chunk: Buffer) => {
      for (const payload of decoder.push(chunk)) output.write(payload);
      armIdlePoll();
    });
    stream.on("error", () => undefined); // the end decides
    stream.once("close", () => {
      output.end();
      if (!killed) pollUntilExit().catch(fail);
    });
    armIdlePoll();
    if (request.stdin !== undefined) stream.end(Buffer.from(request.stdin.buffer, request.stdin.byteOffset, request.stdin.length));
  })().catch(fail);

  return {
    output,
    wait: () => exited,
    kill: () => {
      killed = true;
      socket?.destroy();
      output.end();
      finish(KILLED);
    },
  };
}
