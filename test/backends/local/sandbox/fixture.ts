/**
 * The sandbox tests' world: a writable work dir, a sibling dir it must not
 * write, a secret it must not read, all under /var/tmp (not /tmp: the sandbox
 * has a private /tmp, and a path hidden by it would prove nothing), and a way
 * to open the same session with and without the sandbox, so every escape is
 * shown to work without it.
 */

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestContext } from "vitest";
import { createEnvironment, type Environment } from "../../../../src/index.js";
import type { ExecuteResult } from "../../../../src/core/environment.js";
import { noLocalHelper, skipUnless } from "../../../helpers/native-helper.js";
import type { SandboxConfig } from "../../../../src/backends/local/sandbox/config.js";

export const HAVE_BWRAP = (() => {
  try {
    execFileSync("bwrap", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

export const SKIP_REASON = "bubblewrap (bwrap) is not installed: apt-get install bubblewrap";

export interface World {
  root: string;
  work: string;
  outside: string;
  secretDir: string;
  secretFile: string;
  secret: string;
  cleanup(): void;
}

export function makeWorld(): World {
  const root = mkdtempSync("/var/tmp/shellwright-sandbox-test-");
  const work = join(root, "work");
  const outside = join(root, "outside");
  const secretDir = join(root, "secret");
  for (const dir of [work, outside, secretDir]) mkdirSync(dir);
  const secret = `TOPSECRET-${Math.random().toString(36).slice(2)}`;
  const secretFile = join(root, "token.txt");
  writeFileSync(join(secretDir, "key"), secret);
  writeFileSync(secretFile, secret);
  return {
    root,
    work,
    outside,
    secretDir,
    secretFile,
    secret,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export function sandboxFor(world: World, network: SandboxConfig["network"] = "none"): SandboxConfig {
  return { writable: ["."], denyRead: [world.secretDir, world.secretFile], network };
}

export async function open(
  world: World,
  sandboxed: boolean,
  network?: SandboxConfig["network"],
  fastPath = true,
): Promise<Environment> {
  return createEnvironment({
    backend: "local",
    cwd: world.work,
    fastPath,
    ...(sandboxed ? { sandbox: sandboxFor(world, network) } : {}),
  });
}

/** Both ways a call can run; a sandbox test runs on each, since each enters the sandbox its own way. */
export const PATHS: { name: string; fastPath: boolean }[] = [
  { name: "fast path", fastPath: true },
  { name: "plain path", fastPath: false },
];

/** Skips a fast-path case, with the reason, where no helper was built (a stale one still fails in executeOn). */
export function skipUnlessPath(context: TestContext, fastPath: boolean): void {
  if (fastPath) skipUnless(context, noLocalHelper);
}

/**
 * Runs `command` and checks the call ran on the path asked for: on the fast
 * path the job's parent is the helper (swmux), on the plain path it is not.
 * A stale or missing helper makes every call take the plain path, which
 * would let a fast-path case pass without testing anything.
 */
export async function executeOn(
  env: Pick<Environment, "execute">,
  fastPath: boolean,
  command: string,
): Promise<ExecuteResult> {
  const result = await env.execute(`cat /proc/$PPID/comm\n${command}`);
  const newline = result.output.indexOf("\n");
  const parent = result.output.slice(0, newline);
  if (parent.startsWith("swmux") !== fastPath)
    throw new Error(`the call ran on the ${fastPath ? "plain" : "fast"} path (its parent is ${parent})`);
  return { ...result, output: result.output.slice(newline + 1) };
}

export function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** Host pids whose command line contains `mark`. */
export function pidsWithMark(mark: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (cmdline.includes(mark) && !/\) Z /.test(stat)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

export async function waitGone(mark: string, ms = 3000): Promise<number[]> {
  const deadline = Date.now() + ms;
  let pids = pidsWithMark(mark);
  while (pids.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    pids = pidsWithMark(mark);
  }
  return pids;
}
