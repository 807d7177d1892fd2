/**
 * Shared by the fake SDK sandboxes: runs an argv on THIS machine in its own
 * process group, so "terminating the sandbox" can kill everything it started.
 */

import { spawn, type ChildProcess } from "node:child_process";

/**
 * The environment a fake sandbox's programs start with: this machine's PATH
 * and HOME. HOME brings this machine's login profile, whose `pyenv rehash`
 * waits PYENV_REHASH_TIMEOUT seconds for a lock a killed shell may have left
 * (vitest.config.ts bounds it); a real sandbox has no such profile.
 */
export function hostSandboxEnv(): Record<string, string> {
  const wait = process.env.PYENV_REHASH_TIMEOUT;
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/root",
    ...(wait === undefined ? {} : { PYENV_REHASH_TIMEOUT: wait }),
  };
}

export class LocalProcessGroup {
  readonly #children = new Set<ChildProcess>();

  spawn(
    argv: string[],
    options: { env: NodeJS.ProcessEnv; cwd?: string | undefined; timeoutMs?: number | undefined },
  ): ChildProcess {
    const [command, ...args] = argv;
    const child = spawn(command!, args, {
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
      env: options.env,
      cwd: options.cwd,
    });
    this.#children.add(child);
    child.stdin!.on("error", () => undefined);
    let timer: NodeJS.Timeout | undefined;
    // setTimeout fires at once past 2^31-1 ms: clamp, as a real service would not kill early.
    if (options.timeoutMs !== undefined && options.timeoutMs > 0)
      timer = setTimeout(() => killGroup(child), Math.min(options.timeoutMs, 2 ** 31 - 1));
    child.once("exit", () => {
      clearTimeout(timer);
      this.#children.delete(child);
    });
    return child;
  }

  /** Kills every process group this fake started (a terminated sandbox). */
  killAll(): void {
    for (const child of this.#children) killGroup(child);
  }
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // gone
  }
}

/** The exit code of a child process, as a shell would report it. */
export function exitCodeOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once("error", reject);
    child.once("exit", (code, signal) =>
      resolve(code ?? 128 + (signal === "SIGKILL" ? 9 : signal === "SIGTERM" ? 15 : 1)),
    );
  });
}
