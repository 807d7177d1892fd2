/** The built `shellwright` command run as a user runs it, in a private home and runtime dir. */

import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const bin = join(import.meta.dirname, "../../dist/cli/main.js");

export interface CliHome {
  /** $SHELLWRIGHT_HOME: where named sessions live. */
  home: string;
  /** $XDG_RUNTIME_DIR: where a one-off local session keeps its state dir. */
  runtime: string;
  env: NodeJS.ProcessEnv;
  remove(): void;
}

export function cliHome(): CliHome {
  const root = mkdtempSync(join(tmpdir(), "sw-cli-"));
  const home = join(root, "home");
  const runtime = mkdtempSync(join(root, "run-"));
  return {
    home,
    runtime,
    env: { ...process.env, SHELLWRIGHT_HOME: home, XDG_RUNTIME_DIR: runtime },
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * The one line a machine without the fast-path helper adds (no C compiler at
 * build time): the CLI says it at every start, and the tests that pin stderr
 * must pass there too.
 */
export const NO_FAST_PATH_LINE = /^shellwright: warning: no fast path: .*\n/gm;

/** stderr without the no-fast-path line. */
export const withoutFastPathWarning = (stderr: string): string => stderr.replace(NO_FAST_PATH_LINE, "");

export function cli(where: CliHome, args: string[], options: { input?: string; cwd?: string } = {}) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    env: where.env,
    input: options.input,
    cwd: options.cwd,
    stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: withoutFastPathWarning(result.stderr) };
}

/** Started with an empty stdin (a pipe left open would be read as the command's stdin). */
export function spawnCli(where: CliHome, args: string[], cwd?: string): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, [bin, ...args], { env: where.env, cwd, stdio: "pipe" });
  child.stdin.end();
  return child;
}

/** Resolves with the exit code (or the signal's name) once the process has ended and its output is read. */
export function exited(child: ChildProcessWithoutNullStreams): Promise<number | string> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once("close", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
}
