/**
 * The fast path inside a box we reach only through execs (docs/fast-path.md,
 * "Apptainer and Modal"; docker does the same over its Engine API): the
 * static helper is copied in once per box on an exec's stdin, then runs as
 * ONE long-lived exec whose stdin and stdout carry the frames. Each backend
 * says how it runs a program in its box (BoxExec); the rest is here.
 */

import { PassThrough, type Readable, type Writable } from "node:stream";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { SESSION_MARK } from "../../../core/call-marks.js";
import type { HelperStream } from "./helper-client.js";
import { BASH_FROM_BOX, helperArgs, type HelperProgram } from "./helper-argv.js";
import { staticHelperFor, type StaticHelper } from "./helper-path.js";
import { passOnDebugLog } from "./helper-stderr.js";
import { framesToLines, linesToBytes } from "./text-frames.js";

/** A long-lived program in the box, as the backend started it. */
export interface BoxProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Resolves when the program ended, or could not start. */
  readonly closed: Promise<void>;
  /** Ends the local end (best effort, never throws); the helper quits at the EOF. */
  stop(): void;
  /** Keep this process alive while calls are open (true), not while idle (false). */
  hold?(busy: boolean): void;
}

/**
 * The two output streams of a BoxProcess, and `endWhen(run)`: its `closed`,
 * which ends both once the backend's pump `run` settles, however it settled
 * (a program that could not start ends them too, so a reader never waits).
 */
export function boxOutputs(): {
  stdout: PassThrough;
  stderr: PassThrough;
  endWhen(run: Promise<unknown>): Promise<void>;
} {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const endWhen = (run: Promise<unknown>): Promise<void> =>
    run
      .then(() => undefined)
      .catch(() => undefined)
      .finally(() => {
        stdout.end();
        stderr.end();
      });
  return { stdout, stderr, endWhen };
}

/** How a backend runs programs in its box. */
export interface BoxExec {
  /** The channel carries text only: the helper then speaks its text mode (base64 lines). */
  readonly text?: boolean;
  /** Starts a long-lived program; a failure to start shows as `closed`. */
  spawn(argv: string[]): BoxProcess;
  /** Runs a short program with bytes on its stdin; its exit code and merged output. */
  run(argv: string[], stdin?: Uint8Array): Promise<{ exitCode: number; output: string }>;
}

/** Why the helper can never run in this box (another architecture). */
export class HelperUnsupported extends Error {}

/**
 * The copy, as an argv: checks the box's `uname -m`, then writes the program
 * from stdin into a new directory under `parent`, not writable by others
 * (nobody else in the box can replace it). Exit 3 and the machine name: it
 * cannot run there.
 */
export function helperInstallArgv(machine: string, parent: string): { argv: string[]; path: string } {
  const dir = `${parent}/shellwright-swmux-${randomBytes(6).toString("hex")}`;
  const script = [
    'm=$(uname -m); [ "$m" = "$1" ] || { echo "$m"; exit 3; }',
    'umask 022 && mkdir "$2" && cat > "$2/swmux" && chmod 755 "$2/swmux"',
  ].join("\n");
  return { argv: ["sh", "-c", script, "sh", machine, dir], path: `${dir}/swmux` };
}

/** Reads what an install printed: the helper's path, or why it failed. */
export function installOutcome(exitCode: number, output: string, path: string, where: string): string {
  if (exitCode === 3) throw new HelperUnsupported(`${where} runs on ${output.trim() || "an unknown machine"}`);
  if (exitCode !== 0)
    throw new Error(`copying the fast-path helper into ${where} failed (${exitCode}): ${output.trim().slice(0, 300)}`);
  return path;
}

/**
 * Copies the static helper into the box; resolves its path there. The copy
 * is tried with this machine's helper first (one exec when the box is the
 * same architecture); a box of another one (an arm64 image on an x64 host)
 * gets the helper built for it, when there is one.
 */
export async function installBoxHelper(
  box: BoxExec,
  helper: StaticHelper,
  parent: string,
  where: string,
): Promise<string> {
  const { argv, path } = helperInstallArgv(helper.machine, parent);
  const { exitCode, output } = await box.run(argv, readFileSync(helper.path));
  if (exitCode !== 3) return installOutcome(exitCode, output, path, where);
  const machine = output.trim();
  const other = machine === helper.machine ? undefined : staticHelperFor(machine);
  if (other === undefined)
    throw new HelperUnsupported(`${where} runs on ${machine || "an unknown machine"}, and no helper was built for it`);
  const again = helperInstallArgv(other.machine, parent);
  const second = await box.run(again.argv, readFileSync(other.path));
  return installOutcome(second.exitCode, second.output, again.path, where);
}

/**
 * Starts the helper: finds the box's bash, prints the pid on stderr (so it
 * can be killed inside the box), then execs the helper with its environment
 * (helper-argv.ts). Arguments, never interpolated: the session's mark, then
 * the helper's argv, where BASH_FROM_BOX becomes the bash it found.
 */
const START = [
  "b=$(command -v bash) || exit 127",
  'printf "%s\\n" "$$" >&2',
  "m=$1; shift",
  `for a do shift; [ "$a" = ${BASH_FROM_BOX} ] && a=$b; set -- "$@" "$a"; done`,
  `exec env -i SHLVL=1 "${SESSION_MARK}=$m" "$@"`,
].join("\n");

/** bash is the box's own (BASH_FROM_BOX). */
export interface HelperLaunch extends Omit<HelperProgram, "bash"> {
  /** The helper's text mode (`-t`), for a channel that carries text only. */
  text?: boolean;
}

/** The argv that starts the helper in the box. */
export function helperStartArgv(launch: HelperLaunch): string[] {
  const args = helperArgs({
    snapshot: launch.snapshot,
    workDir: launch.workDir,
    bash: BASH_FROM_BOX,
    text: launch.text === true,
  });
  return ["sh", "-c", START, "sh", launch.sessionMark, launch.helper, ...args];
}

/** Reads the helper's pid from the first line of its stderr; returns the reader of what it said after. */
export function pidFromStderr(stream: Readable, onPid: (pid: number) => void): () => string {
  let text = "";
  let found = false;
  const onData = (chunk: Buffer): void => {
    text = (text + chunk.toString("latin1")).slice(-4096);
    if (found) return passOnDebugLog(chunk);
    const line = /^(\d+)\n/.exec(text);
    if (line) {
      found = true;
      onPid(Number(line[1]));
      text = text.slice(line[0].length);
      passOnDebugLog(text);
    } else if (text.length > 64) {
      found = true;
      passOnDebugLog(text);
    }
  };
  stream.on("data", onData);
  return () => text;
}

/**
 * The helper's exec as a HelperStream, available at once: requests written
 * before it runs wait in `input`. When `launch` rejects, or the exec cannot
 * start or ends, `closed` resolves (the runner then falls back to the plain
 * path and tries again later).
 */
export function startBoxHelper(box: BoxExec, launch: Promise<HelperLaunch>): HelperStream {
  const input = new PassThrough();
  const output = new PassThrough();
  let running: BoxProcess | undefined;
  let pid: number | undefined;
  let stderrTail = (): string => "";
  let killed = false;
  let busy = true;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  let ended = false;
  /** What feeds `output`: the helper's stdout, or in text mode its decoder. */
  let source: Readable | undefined;
  const end = (): void => {
    if (ended) return;
    ended = true;
    input.unpipe();
    // A kill from inside output's reader comes while the decoder may be handing on the rest of one chunk's
    // lines: they go nowhere (drained), never into the ended stream (an error nobody listens for).
    source?.unpipe(output);
    source?.resume();
    output.end();
    markClosed();
  };

  void (async () => {
    const target = await launch;
    if (killed) return end();
    const started = box.spawn(helperStartArgv({ ...target, text: box.text === true }));
    running = started;
    started.hold?.(busy);
    stderrTail = pidFromStderr(started.stderr, (found) => (pid = found));
    started.stdin.on("error", () => undefined);
    started.stdout.on("error", () => undefined);
    // pipe() pauses the helper's stdout while our reader is behind: memory stays bounded.
    if (box.text === true) {
      source = started.stdout.pipe(linesToBytes());
      input.pipe(framesToLines()).pipe(started.stdin);
    } else {
      source = started.stdout;
      input.pipe(started.stdin);
    }
    source.pipe(output, { end: false });
    void started.closed.then(end);
    if (killed) started.stop();
  })().catch((error: unknown) => {
    // The copy failed (another architecture, a noexec temp dir): the reason is what the warning names.
    const reason = error instanceof Error ? error.message : String(error);
    stderrTail = () => reason;
    end();
  });

  return {
    input,
    output,
    closed,
    hold: (next) => {
      busy = next;
      running?.hold?.(next);
    },
    stderrTail: () => stderrTail(),
    // A command stopped the helper (`kill -STOP $PPID`): continued by another exec in the box.
    resume: () => {
      if (pid !== undefined)
        void box.run(["sh", "-c", 'kill -CONT "$1" 2>/dev/null', "sh", String(pid)]).catch(() => 0);
    },
    kill: () => {
      killed = true;
      running?.stop();
      if (pid !== undefined) void box.run(["sh", "-c", 'kill -9 "$1" 2>/dev/null', "sh", String(pid)]).catch(() => 0);
      end();
    },
  };
}
