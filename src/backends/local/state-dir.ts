/**
 * Where a local session keeps its state dir: the first of the fast roots
 * (paths.ts) where a program can really run. The PTY helper and everything
 * else that runs a helper executes from this directory, and /dev/shm is
 * mounted noexec by Docker, Podman and Kubernetes. access(X_OK) says yes on a
 * noexec mount, so the only honest test is to try: execve of an empty file
 * fails with EACCES where exec is refused (the mount is checked before the
 * file's format) and with ENOEXEC where it is allowed, without a program
 * having to start.
 */

import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { stateRoots } from "./paths.js";

/** The verdict per root, once per process: mounts do not change under a running program. */
const verdicts = new Map<string, Promise<boolean>>();

/**
 * A new private directory (0700) in the first root that allows exec; the last root when none does. A sandboxed
 * session's has its own prefix: its commands can write it, so a prune never trusts what it records.
 */
export async function makeStateDir(prefix = "shellwright-"): Promise<string> {
  const roots = stateRoots();
  for (const [index, root] of roots.entries()) {
    const dir = await mkdtemp(join(root, prefix));
    if (index === roots.length - 1) return dir;
    let verdict = verdicts.get(root);
    if (verdict === undefined) {
      verdict = canExecuteIn(dir);
      verdicts.set(root, verdict);
    }
    if (await verdict) return dir;
    rmSync(dir, { recursive: true, force: true });
  }
  throw new Error("unreachable: stateRoots() always lists the OS temp dir");
}

/** True when a file in `dir` can be executed. */
export function canExecuteIn(dir: string): Promise<boolean> {
  const probe = join(dir, "exec-probe");
  writeFileSync(probe, "", { mode: 0o700 });
  return new Promise<boolean>((resolve) => {
    const child = spawn(probe, [], { stdio: "ignore" });
    child.once("error", (error: NodeJS.ErrnoException) => resolve(error.code !== "EACCES" && error.code !== "EPERM"));
    child.once("exit", () => resolve(true));
  }).finally(() => rmSync(probe, { force: true }));
}
