/**
 * `exec --pty` and `shell`: this terminal attached to a program under a
 * pseudo-terminal in the session's backend (the library's PTY processes,
 * docs/interactive.md). What is typed goes to the program as it is typed
 * (the local terminal is put in raw mode, so Ctrl-C, Ctrl-Z and Ctrl-D are
 * bytes for the program's terminal, whose line discipline turns them into
 * signals there), what the program writes comes back as it wrote it, and the
 * PTY's size follows this terminal's. Raw mode is undone on every way out:
 * the program's end, an error, a signal, and process.exit().
 */

import { StringDecoder } from "node:string_decoder";
import type { Environment } from "../core/environment.js";
import { processRegistry } from "../tools/process/process-registry.js";

export interface AttachOptions {
  cwd?: string;
  timeoutMs?: number;
  /** Aborting (a signal to this process) ends the program's whole terminal session. */
  signal: AbortSignal;
}

export interface Attached {
  /** The program's exit code; 124 after the timeout. */
  exitCode: number;
  timedOut: boolean;
}

/** Never matches: waiting on it ends only when the program's output has all arrived. */
// Matches nothing, in the syntax every pattern now takes (RE2: no lookaround).
const NEVER = /[^\s\S]/;
/** The longest a timer may wait in Node (about 24.8 days). */
const FOREVER_MS = 2 ** 31 - 1;

export async function attachPty(env: Environment, command: string, options: AttachOptions): Promise<Attached> {
  const stdin = process.stdin;
  const stdout = process.stdout;
  const size = () => ({
    cols: stdout.isTTY && stdout.columns > 0 ? stdout.columns : 80,
    rows: stdout.isTTY && stdout.rows > 0 ? stdout.rows : 24,
  });
  const registry = processRegistry(env);
  const restore = rawMode();
  const cleanups: (() => void)[] = [restore];
  try {
    const program = await registry.spawn(command, {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      pty: size(),
      onOutput: (text) => {
        stdout.write(text);
        // Nothing waits for a pattern here: the text kept for one is dropped as it arrives.
        registry.markAction(program);
      },
    });
    // Ended when the program has ended and its last output arrived (the follower ends after it).
    const ended = registry.waitFor(program, NEVER, FOREVER_MS);

    const decoder = new StringDecoder("utf8");
    const onData = (chunk: Buffer): void => {
      const text = decoder.write(chunk);
      if (text !== "") registry.write(program, text).catch(() => undefined);
    };
    // Piped input ends: the terminal's end-of-file character, as if typed at an empty line.
    const onEnd = (): void => void registry.write(program, `${decoder.end()}\x04`).catch(() => undefined);
    stdin.on("data", onData);
    stdin.once("end", onEnd);
    stdin.resume();
    cleanups.push(() => {
      stdin.off("data", onData);
      stdin.off("end", onEnd);
      stdin.pause();
    });

    const onResize = (): void => void registry.resize(program, size()).catch(() => undefined);
    stdout.on("resize", onResize);
    cleanups.push(() => stdout.off("resize", onResize));

    let timedOut = false;
    const stop = (): void => void registry.kill(program).catch(() => undefined);
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            stop();
          }, options.timeoutMs);
    options.signal.addEventListener("abort", stop, { once: true });
    if (options.signal.aborted) stop();
    cleanups.push(() => {
      clearTimeout(timer);
      options.signal.removeEventListener("abort", stop);
    });

    await ended;
    // The follower has ended, so the program has: one look records how.
    while (!(await registry.wait(program, 10_000))) {
      /* still exiting */
    }
    return { exitCode: timedOut ? 124 : (program.exitCode ?? 1), timedOut };
  } finally {
    for (const cleanup of cleanups.reverse()) cleanup();
  }
}

/** Puts a terminal stdin in raw mode; the returned function (also run at process exit) puts it back. */
function rawMode(): () => void {
  const stdin = process.stdin;
  if (!stdin.isTTY) return () => undefined;
  stdin.setRawMode(true);
  const restore = (): void => {
    process.off("exit", restore);
    if (stdin.isRaw) stdin.setRawMode(false);
  };
  process.on("exit", restore);
  return restore;
}
