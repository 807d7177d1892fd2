/**
 * What `--prune` takes from a dead owner's state dir (src/backends/local/leftover-jobs.ts), against records
 * that lie: a sandboxed session's dir can be written from inside the sandbox, so a `groups` line there must not
 * kill a group outside it; a `cgroup` line must name a cgroup that dead owner made; a dir that another user owns
 * or can write is never a leftover at all.
 */

import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { endLeftoverJobs } from "../../../src/backends/local/leftover-jobs.js";
import { localLeftovers } from "../../../src/backends/local/leftovers.js";
import { SANDBOX_DIR_PREFIX } from "../../../src/backends/local/paths.js";
import { SessionCgroup } from "../../../src/backends/local/session-cgroup.js";
import { killAll } from "../../helpers/proc-scan.js";
import { alive, eventually } from "../../helpers/processes.js";

const root = mkdtempSync(join(tmpdir(), "sw-leftover-jobs-"));
const started = new Set<number>();
afterAll(() => {
  killAll(started);
  rmSync(root, { recursive: true, force: true });
});

/** A sleep that leads its own process group (detached), as a call's wrapper does. */
function groupLeader(): number {
  const child = spawn("sleep", ["4821"], { detached: true, stdio: "ignore" });
  child.unref();
  started.add(child.pid!);
  return child.pid!;
}

function startTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
}

/** A pid that belonged to a process that has ended. */
function deadPid(): number {
  return Number(spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).stdout.trim());
}

describe("a dead owner's state dir as --prune reads it", () => {
  it("kills a recorded group that is still the session's", async () => {
    const dir = join(root, "shellwright-plain");
    mkdirSync(dir);
    const leader = groupLeader();
    writeFileSync(join(dir, "groups"), `${leader} ${startTime(leader)}\n`);
    await endLeftoverJobs(dir);
    await eventually(() => !alive(leader), "the recorded group's leader dies");
  });

  it("takes no group from a sandboxed session's dir, whose commands could have written it", async () => {
    const dir = join(root, `${SANDBOX_DIR_PREFIX}forged`);
    mkdirSync(dir);
    const outside = groupLeader();
    writeFileSync(join(dir, "groups"), `${outside} ${startTime(outside)}\n`);
    await endLeftoverJobs(dir);
    // A KILL takes effect at once; give it the time the other case needs anyway.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(alive(outside)).toBe(true);
  });

  it("takes a cgroup only when its name is one that dead owner made, inside a cgroup2 mount", () => {
    const own = SessionCgroup.create();
    try {
      const path = own?.path ?? "/sys/fs/cgroup/shellwright-123-0123456789ab";
      const owner = Number(/shellwright-(\d+)-/.exec(path)![1]);
      if (own !== undefined) expect(SessionCgroup.leftBy(owner, path)?.path).toBe(path);
      expect(SessionCgroup.leftBy(owner + 1, path)).toBeUndefined();
      expect(SessionCgroup.leftBy(owner, dirname(path))).toBeUndefined();
      expect(SessionCgroup.leftBy(owner, `${dirname(path)}/../shellwright-${owner}-0123456789ab`)).toBeUndefined();
      expect(SessionCgroup.leftBy(owner, `${root}/shellwright-${owner}-0123456789ab`)).toBeUndefined();
    } finally {
      own?.remove();
    }
  });

  it("never finds a dir that others can write, whatever its owner file says", async () => {
    const previous = process.env.XDG_RUNTIME_DIR;
    const runtime = join(root, "run");
    mkdirSync(runtime);
    process.env.XDG_RUNTIME_DIR = runtime;
    try {
      const open = join(runtime, "shellwright-open");
      const mine = join(runtime, "shellwright-mine");
      for (const dir of [open, mine]) {
        mkdirSync(dir);
        writeFileSync(join(dir, "owner"), `${hostname()}/${deadPid()}\n`);
      }
      chmodSync(open, 0o777);
      chmodSync(mine, 0o700);
      // Only this test's: the other roots (/dev/shm, the temp dir) hold other sessions' leftovers.
      const found = (await localLeftovers.find()).filter((l) => l.what.startsWith(`${runtime}/`));
      expect(found.map((l) => l.what)).toEqual([mine]);
      await localLeftovers.remove(found);
      expect(existsSync(open)).toBe(true);
      expect(existsSync(mine)).toBe(false);
    } finally {
      if (previous === undefined) delete process.env.XDG_RUNTIME_DIR;
      else process.env.XDG_RUNTIME_DIR = previous;
    }
  });
});
