/**
 * Not E2B's file. On E2B every sandbox is a fresh machine; here every sandbox
 * of every vendored test file shares one home (E2B_HOME), and the files run in
 * parallel workers while using the same file names (`hello.txt`,
 * `test_file.txt`). So a test holds this lock (a directory, atomic to create,
 * across processes) while its sandbox lives, and afterwards removes what
 * appeared in the home meanwhile: the next test starts from the same home.
 */

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const LOCK = join(tmpdir(), "shellwright-vendored-e2b-home.lock");
const OWNER = join(LOCK, "pid");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The lock's holder; NaN while it is being taken (or was just let go). */
function holder(): number {
  try {
    return Number.parseInt(readFileSync(OWNER, "utf8"), 10);
  } catch {
    return Number.NaN;
  }
}

function tryTake(): boolean {
  try {
    mkdirSync(LOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    // A holder that died (a killed worker) leaves the lock behind: take it over.
    const pid = holder();
    if (Number.isInteger(pid) && !alive(pid)) rmSync(LOCK, { recursive: true, force: true });
    return false;
  }
  writeFileSync(OWNER, String(process.pid));
  return true;
}

/** Runs `body` with the home to itself, then removes the entries it left there. */
export async function withHome<T>(home: string, body: () => Promise<T>): Promise<T> {
  while (!tryTake()) await new Promise((resolve) => setTimeout(resolve, 100));
  const before = new Set(readdirSync(home));
  try {
    return await body();
  } finally {
    for (const name of readdirSync(home))
      if (!before.has(name)) rmSync(join(home, name), { recursive: true, force: true });
    rmSync(LOCK, { recursive: true, force: true });
  }
}
