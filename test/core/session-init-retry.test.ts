/**
 * A session whose snapshot bootstrap ran out of time (a loaded machine, a
 * login profile waiting on a lock: CI's 50 gateway clients at once) tries it
 * once more at the next command instead of running without a snapshot for
 * good. A profile that is slow only the first time stands in for the load.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../src/index.js";

let home: string;
const open: Environment[] = [];

afterEach(async () => {
  for (const env of open.splice(0)) await env.close();
  rmSync(home, { recursive: true, force: true });
});

async function openWithProfile(profile: string): Promise<{ env: Environment; warnings: string[] }> {
  home = mkdtempSync(join(tmpdir(), "init-retry-test-"));
  writeFileSync(join(home, ".bash_profile"), profile);
  const warnings: string[] = [];
  const env = await createEnvironment({
    backend: "local",
    cwd: "/tmp",
    env: { HOME: home },
    initTimeoutMs: 1500,
    onWarning: (message: string) => void warnings.push(message),
  });
  open.push(env);
  return { env, warnings };
}

describe("a session whose init timed out", () => {
  it("tries the init again at the next command, and keeps state from then on", async () => {
    // Slow the first time only: the flag file is written before the sleep.
    const { env, warnings } = await openWithProfile(
      '[ -e "$HOME/seen" ] || { : > "$HOME/seen"; sleep 5; }\nexport FROM_PROFILE=yes\n',
    );
    expect(warnings.join("\n")).toMatch(/session init failed \(it timed out after 1500 ms\); it is tried once more/);
    const first = await env.execute("export KEPT=1; cd /; echo $FROM_PROFILE");
    expect(first).toMatchObject({ exitCode: 0, output: "yes\n", cwd: "/" });
    expect(await env.execute("echo $KEPT; pwd")).toMatchObject({ exitCode: 0, output: "1\n/\n" });
    expect(warnings).toHaveLength(1);
  });

  it("gives up after the second try: commands run without a snapshot, and say nothing more", async () => {
    const { env, warnings } = await openWithProfile("sleep 2\n");
    await env.execute("echo one");
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(/without a session snapshot, so exported variables will not persist/);
    await env.execute("echo two");
    expect(warnings).toHaveLength(2);
  }, 30_000);
});
