/**
 * A call whose state could not be saved (issue 22.6) on the local backend
 * (its `stateDir`) and on ssh (its `remoteTempDir`, where the script itself
 * renames the snapshot), on both paths: a state dir that the command filled.
 * It says so in one line, keeps the command's exit status and leaves the
 * session's state as it was. (The limits and builtins a command can change
 * are in the compat suite.) The state dir is a tmpfs of its own, which needs
 * root; elsewhere skipped. The test sshd is on this machine, so the same
 * tmpfs serves it.
 */

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import {
  BackendUnavailableError,
  createEnvironment,
  type Environment,
  type LocalConfig,
  type SshConfig,
} from "../../src/index.js";
import { noLocalHelper, noStaticHelper, skipUnless } from "../helpers/native-helper.js";
import { sshTestConfig, sshTestEnabled } from "../backends/ssh/ssh-env.js";
import { eventually } from "../helpers/processes.js";

const dir = mkdtempSync(join(tmpdir(), "save-failed-test-"));
const mounted =
  process.getuid?.() === 0 && spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir]).status === 0;
beforeAll(() => {
  if (!mounted) console.warn("session-save-failed: skipped, a tmpfs state dir needs root (mount -t tmpfs)");
});
afterAll(() => {
  if (mounted) spawnSync("umount", [dir]);
  rmSync(dir, { recursive: true, force: true });
});

const NOTICE =
  "[shellwright: this call's state could not be saved: writing it failed (is the state directory full?); the session keeps the state it had before this call]";

const BACKENDS: Array<[string, boolean, () => LocalConfig | SshConfig, string | undefined]> = [
  ["local", true, () => ({ backend: "local", stateDir: dir }), noLocalHelper],
  ["ssh", sshTestEnabled, () => ({ ...sshTestConfig(), remoteTempDir: dir }), noStaticHelper],
];

/** Each backend on the fast path and on the plain one. */
const PATHS = BACKENDS.flatMap(([name, enabled, config, noHelper]) =>
  [true, false].map((fastPath) => ({ name, enabled, config, noHelper, fastPath })),
);
type PathCase = (typeof PATHS)[number];

/** A session on the path under test, once a call has shown it runs there (the helper starts in the background). */
async function openOnPath(
  context: TestContext,
  { enabled, config, noHelper, fastPath }: PathCase,
): Promise<Environment> {
  if (!enabled) context.skip('the test sshd is not running (eval "$(bash scripts/test-env/sshd.sh start)")');
  if (fastPath) skipUnless(context, noHelper);
  const session = await createEnvironment({ ...config(), cwd: "/", fastPath });
  // The helper's process is the job's parent's parent: a call ran on the path under test.
  const parent = async (): Promise<string> => (await session.execute("cat /proc/$PPID/comm")).output;
  if (fastPath) await eventually(async () => /^swmux/.test(await parent()), "the fast path");
  else expect(await parent()).toMatch(/^bash/);
  return session;
}

describe.skipIf(!mounted).each(PATHS)("a full state dir ($name, fastPath $fastPath)", (path) => {
  it("says the state was not saved, keeps the exit status and the state from before", async (context) => {
    const session = await openOnPath(context, path);
    try {
      await session.execute("export KEPT=1; kept() { echo fine; }");
      const full = await session.execute(
        `head -c 10000000 /dev/zero > ${dir}/fill 2>/dev/null; export LOST=1; echo did`,
      );
      expect(full).toMatchObject({ output: `did\n\n${NOTICE}`, exitCode: 0 });
      await session.execute(`rm ${dir}/fill`);
      expect((await session.execute("echo $KEPT ${LOST-unset}; kept")).output).toBe("1 unset\nfine\n");
    } finally {
      await session.close();
    }
  });
});

/** Fills the state dir's tmpfs to the last byte, from outside the session; returns the undo. */
function fill(): () => void {
  const file = join(dir, "fill-outside");
  const chunk = Buffer.alloc(64 * 1024);
  for (const size of [chunk.length, 4096, 512, 1]) {
    const piece = chunk.subarray(0, size);
    for (;;) {
      try {
        writeFileSync(file, piece, { flag: "a" });
      } catch {
        break;
      }
    }
  }
  return () => rmSync(file, { force: true });
}

describe.skipIf(!mounted).each(PATHS)("a state dir full before the call ($name, fastPath $fastPath)", (path) => {
  it("runs the command, keeps its exit status, says the state was not saved, and commits none of it (issue 37.3)", async (context) => {
    const session = await openOnPath(context, path);
    try {
      await session.execute("export KEPT=1; cd /tmp");
      // The helper replaces its launcher after it answered a commit, and that frees the pages of the state before:
      // a call that commits nothing returns only after it, so the tmpfs is full for the call below.
      await session.execute("true");
      const undo = fill();
      let full;
      try {
        // It used to end with 125, its own status lost, and no word about the state.
        full = await session.execute("cd /usr; export LOST=1; echo did; (exit 3)");
      } finally {
        undo();
      }
      expect(full).toMatchObject({ output: `did\n\n${NOTICE}`, exitCode: 3, cwd: "/tmp" });
      expect(await session.execute("echo $KEPT ${LOST-unset}; pwd")).toMatchObject({
        output: "1 unset\n/tmp\n",
        cwd: "/tmp",
      });
    } finally {
      await session.close();
    }
  });
});

describe.skipIf(!mounted).each(BACKENDS)("a state dir full before the session opens (%s)", (_name, enabled, config) => {
  it("fails the open, saying where the state could not be saved (issue 37.3)", async (context) => {
    if (!enabled) context.skip('the test sshd is not running (eval "$(bash scripts/test-env/sshd.sh start)")');
    const before = readdirSync(dir);
    const undo = fill();
    try {
      // It used to open, and then every call ended with 125 and the session kept nothing.
      const opened = createEnvironment({ ...config(), cwd: "/", fastPath: false });
      await expect(opened).rejects.toThrow(BackendUnavailableError);
      await expect(opened).rejects.toThrow(
        `The session's state could not be saved in ${dir} on the ${_name} backend: writing it failed (is the state directory full?).`,
      );
    } finally {
      undo();
    }
    // No snapshot of the session that did not open is left behind.
    const left = readdirSync(dir).filter((f) => !before.includes(f) && f.startsWith("shellwright-snap-"));
    expect(left).toEqual([]);
  });
});

describe.skipIf(!mounted)("a snapshot that cannot be moved into place (local, plain path)", () => {
  it("commits none of the call's state: not its cwd either (issue 37.3)", async () => {
    const stateDir = join(dir, "rename");
    mkdirSync(stateDir);
    const session = await createEnvironment({ backend: "local", stateDir, cwd: "/", fastPath: false });
    try {
      await session.execute("export KEPT=1; cd /tmp");
      // A directory in the snapshot's place: the rename of the call's dump over it fails.
      const snapshot = join(
        stateDir,
        readdirSync(stateDir).find((f) => f.startsWith("shellwright-snap-"))!,
      );
      unlinkSync(snapshot);
      mkdirSync(join(snapshot, "in-the-way"), { recursive: true });
      const moved = await session.execute("cd /usr; export LOST=1; echo did");
      expect(moved).toMatchObject({
        output:
          "shellwright: the session snapshot is missing; the session state was reset\ndid\n\n[shellwright: this call's state could not be saved: it could not be moved into place; the session keeps the state it had before this call]",
        exitCode: 0,
        cwd: "/tmp",
      });
    } finally {
      await session.close();
    }
  });
});
