/**
 * The docker backend's fast path (docs/fast-path.md, "Docker"): the static
 * helper is copied into the container once per session, then runs there as
 * ONE long-lived `docker exec` with stdin attached (box-helper.ts, shared
 * with the other box backends); its framed protocol rides on the exec's
 * stdin and on the stdout stream of the engine's multiplexed output. A call
 * then costs a fork inside the container instead of an Engine API exec (tens
 * of ms).
 */

import type { Socket } from "node:net";
import { PassThrough, type Duplex } from "node:stream";
import { boxOutputs, type BoxExec, type BoxProcess } from "../shared/fast-path/box-helper.js";
import { MultiplexDecoder, type EngineApi } from "./engine.js";
import { startExec } from "./exec.js";

/**
 * Programs in one container as the fast path needs them (BoxExec): each is an
 * Engine API exec. The long-lived one has stdin attached and no TTY; its
 * output is the engine's multiplexed stream, split here into stdout and
 * stderr. `signal` (the session's stop) stops short execs still running: a
 * helper copy left streaming into a container being removed kept this
 * process alive for minutes.
 *
 * The copy goes on an exec's stdin, not through the engine's archive
 * endpoint: the engine holds the container's lock while it reads an archive's
 * body, so every inspect or exec of the container (the user's `docker
 * inspect` too) waits until the upload ends, and forever if this process
 * stalls mid-upload (measured: a synchronous child_process call right after a
 * session opened hung `docker inspect` for its whole 60 s timeout). An exec's
 * stdin holds no lock. `containerId` names the session's container now (a
 * replaced one gets its own copy of the helper).
 */
export function dockerBox(engine: EngineApi, containerId: () => string, signal: AbortSignal): BoxExec {
  return {
    spawn: (argv) => spawnInContainer(engine, containerId(), argv),
    run: async (argv, stdin) => {
      const { code, text } = await execText(engine, containerId(), argv, {
        signal,
        ...(stdin === undefined ? {} : { stdin }),
      });
      return { exitCode: code, output: text };
    },
  };
}

function spawnInContainer(engine: EngineApi, containerId: string, argv: string[]): BoxProcess {
  const stdin = new PassThrough();
  const { stdout, stderr, endWhen } = boxOutputs();
  let socket: Duplex | undefined;
  let stopped = false;
  let busy = true;
  const hold = (next: boolean): void => {
    busy = next;
    const s = socket as Socket | undefined;
    if (busy) s?.ref?.();
    else s?.unref?.();
  };
  const closed = endWhen(
    (async () => {
      const body = { AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false, Cmd: argv };
      const created = await engine.request("POST", `/containers/${containerId}/exec`, body);
      if (created.status !== 201) return;
      const stream = await engine.startExec((created.json as { Id: string }).Id);
      socket = stream;
      if (stopped) {
        stream.destroy();
        return;
      }
      hold(busy);
      const decoder = new MultiplexDecoder();
      stream.on("data", (chunk: Buffer) => {
        for (const frame of decoder.push(chunk)) {
          if (frame.stream !== 1) stderr.write(frame.payload);
          // The helper's stream is shared by every call: a slow consumer pauses all of it.
          else if (!stdout.write(frame.payload)) {
            stream.pause();
            stdout.once("drain", () => stream.resume());
          }
        }
      });
      stream.on("error", () => undefined); // the close decides
      stdin.pipe(stream);
      await new Promise((resolve) => stream.once("close", resolve));
    })(),
  );
  return {
    stdin,
    stdout,
    stderr,
    closed,
    hold,
    // Closing the stream ends the helper too (EOF on its stdin).
    stop: () => {
      stopped = true;
      socket?.destroy();
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
