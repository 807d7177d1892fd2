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
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, type LocalConfig, type SshConfig } from "../../src/index.js";
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

describe
  .skipIf(!mounted)
  .each(
    BACKENDS.flatMap(([name, enabled, config, noHelper]) =>
      [true, false].map((fastPath) => ({ name, enabled, config, noHelper, fastPath })),
    ),
  )("a full state dir ($name, fastPath $fastPath)", ({ enabled, config, noHelper, fastPath }) => {
  it("says the state was not saved, keeps the exit status and the state from before", async (context) => {
    if (!enabled) context.skip('the test sshd is not running (eval "$(bash scripts/test-env/sshd.sh start)")');
    if (fastPath) skipUnless(context, noHelper);
    const session = await createEnvironment({ ...config(), cwd: "/", fastPath });
    try {
      // The helper's process is the job's parent's parent: this call ran on the path under test.
      const parent = async (): Promise<string> => (await session.execute("cat /proc/$PPID/comm")).output;
      if (fastPath) await eventually(async () => /^swmux/.test(await parent()), "the fast path");
      else expect(await parent()).toMatch(/^bash/);
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
