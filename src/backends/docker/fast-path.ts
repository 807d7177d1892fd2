/**
 * The docker backend's fast path (docs/fast-path.md, "Docker"): the static
 * helper is copied into the container once per session, then runs there as
 * ONE long-lived `docker exec` with stdin attached; its framed protocol rides
 * on the exec's stdin and on the stdout stream of the engine's multiplexed
 * output. A call then costs a fork inside the container instead of an Engine
 * API exec (tens of ms).
 */

import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { PassThrough, type Duplex } from "node:stream";
import type { HelperStream } from "../shared/fast-path/helper-client.js";
import {
  helperInstallArgv,
  helperStartArgv,
  installOutcome,
  type HelperLaunch,
} from "../shared/fast-path/box-helper.js";
import { ApiError, FrameDecoder, type EngineApi } from "./engine.js";
import { startExec } from "./exec.js";

/**
 * Copies the static helper into a new directory under `parent` in the
 * container, on an exec's stdin, and resolves its path there. Throws
 * HelperUnsupported when it could never run there, any other error when this
 * attempt failed.
 *
 * Not the engine's archive endpoint: the engine holds the container's lock
 * while it reads an archive's body, so every inspect or exec of the
 * container (the user's `docker inspect` too) waits until the upload ends,
 * and forever if this process stalls mid-upload (measured: a synchronous
 * child_process call right after a session opened hung `docker inspect` for
 * its whole 60 s timeout). An exec's stdin holds no lock.
 */
export async function installHelper(
  engine: EngineApi,
  containerId: string,
  parent: string,
  helper: { path: string; machine: string },
  signal?: AbortSignal,
): Promise<string> {
  const { argv, path } = helperInstallArgv(helper.machine, parent);
  const { code, text } = await execText(engine, containerId, argv, {
    stdin: readFileSync(helper.path),
    ...(signal === undefined ? {} : { signal }),
  });
  return installOutcome(code, text, path, "the container");
}

export interface DockerHelperLaunch extends HelperLaunch {
  containerId: string;
}

/**
 * The helper's exec as a HelperStream, available at once: requests written
 * before the exec runs wait in `input`. When `launch` rejects, or the exec
 * cannot start or ends, `closed` resolves (the runner then falls back to the
 * plain path and tries again later).
 */
export function startDockerHelper(engine: EngineApi, launch: Promise<DockerHelperLaunch>): HelperStream {
  const input = new PassThrough();
  const output = new PassThrough();
  let socket: Duplex | undefined;
  let containerId: string | undefined;
  let pid: number | undefined;
  let killed = false;
  let busy = true;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    input.unpipe();
    output.end();
    markClosed();
  };
  const hold = (next: boolean): void => {
    busy = next;
    const s = socket as Socket | undefined;
    if (busy) s?.ref?.();
    else s?.unref?.();
  };

  void (async () => {
    const target = await launch;
    containerId = target.containerId;
    if (killed) return end();
    const body = {
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      Cmd: helperStartArgv(target),
    };
    const created = await engine.request("POST", `/containers/${target.containerId}/exec`, body);
    if (created.status !== 201)
      throw new ApiError(created.status, created.text, `/containers/${target.containerId}/exec`);
    const stream = await engine.startExec((created.json as { Id: string }).Id);
    socket = stream;
    if (killed) {
      stream.destroy();
      return end();
    }
    hold(busy);
    const decoder = new FrameDecoder();
    let stderr = "";
    stream.on("data", (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) {
        if (frame.stream === 1) {
          // The helper's stream is shared by every call: a slow consumer pauses all of it.
          if (!output.write(frame.payload)) {
            stream.pause();
            output.once("drain", () => stream.resume());
          }
        } else if (pid === undefined) {
          stderr += frame.payload.toString("latin1");
          const line = /^(\d+)\n/.exec(stderr);
          if (line) pid = Number(line[1]);
        }
      }
    });
    stream.on("error", () => undefined); // the close decides
    stream.once("close", end);
    input.pipe(stream);
  })().catch(end);

  return {
    input,
    output,
    closed,
    hold,
    kill: () => {
      killed = true;
      // Closing the stream ends the helper too (EOF on its stdin); the kill is for a helper that is stuck.
      socket?.destroy();
      if (containerId !== undefined && pid !== undefined)
        void execText(engine, containerId, ["sh", "-c", 'kill -9 "$1" 2>/dev/null', "sh", String(pid)]).catch(
          () => undefined,
        );
      end();
    },
  };
}

/** Runs a short command in the container and resolves its exit code and output. */
export async function execText(
  engine: EngineApi,
  containerId: string,
  cmd: string[],
  options: { stdin?: Uint8Array; signal?: AbortSignal } = {},
): Promise<{ code: number; text: string }> {
  const { signal, ...request } = options;
  const exec = startExec(engine, { containerId, cmd, ...request });
  // Stops the local end: an exec left streaming into a container being removed kept this process alive for minutes.
  signal?.addEventListener("abort", () => exec.kill(), { once: true });
  if (signal?.aborted) exec.kill();
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of exec.output) text += decoder.decode(chunk as Uint8Array, { stream: true });
  return { code: await exec.wait(), text };
}
