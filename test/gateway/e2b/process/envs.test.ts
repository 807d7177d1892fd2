/**
 * A command's envs through the real SDK on the local backend, plain path and
 * fast path: the values reach the command exactly and are on no process's
 * command line (/proc/PID/cmdline is readable by any user).
 */

import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CommandExitError, Sandbox } from "e2b";
import { useE2bSandbox } from "../sandbox-fixture.js";
import { alive, eventually } from "../../../helpers/processes.js";

/** The pids whose command line holds `text`. */
function commandLinesHolding(text: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`).includes(text)) found.push(Number(name));
    } catch {
      // Gone since the listing, or not ours to read.
    }
  }
  return found;
}

describe.each([false, true])("envs with fastPath %s", (fastPath) => {
  const e2b = useE2bSandbox(fastPath);

  it("keeps a value off every command line while the command runs", async () => {
    const marker = `secret-${randomUUID()}`;
    const handle = await e2b.sandbox.commands.run("echo $$; exec sleep 300", {
      envs: { API_KEY: `${marker} it's` },
      background: true,
    });
    await eventually(() => handle.stdout !== "", "the command to start");
    const osPid = Number(handle.stdout.trim());
    // The check is worth something: the command really holds the value, in its environment.
    expect(readFileSync(`/proc/${osPid}/environ`).includes(marker)).toBe(true);
    expect(commandLinesHolding(marker)).toEqual([]);
    expect(await handle.kill()).toBe(true);
    await eventually(() => !alive(osPid), "the killed command to be gone");
  });

  it("hands the command each value exactly: quotes, $, backticks, newlines, UTF-8, empty", async () => {
    const envs = {
      A: `it's "q" $HOME \`id\` $(id)`,
      B: "line1\nline2\n",
      C: "é ✓ 日本",
      D: "",
      E: "  \\t\\\\ padded\t ",
    };
    const result = await e2b.sandbox.commands.run(
      'printf "%s|" "$A" "$B" "$C" "$D" "$E"; printf "%s" "${__sw_e0-gone}"',
      {
        envs,
      },
    );
    expect(result.stdout).toBe(`${envs.A}|${envs.B}|${envs.C}||${envs.E}|gone`);
    // Only that command had them.
    expect((await e2b.sandbox.commands.run('echo "${A-unset}"')).stdout).toBe("unset\n");
  });

  it("keeps the command's exit code, and takes a 100 kB value (the kernel caps one variable at 128 KiB)", async () => {
    const failed = await e2b.sandbox.commands.run('exit "$CODE"', { envs: { CODE: "3" } }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(CommandExitError);
    expect((failed as CommandExitError).exitCode).toBe(3);
    const big = "x".repeat(100_000);
    expect((await e2b.sandbox.commands.run('printf %s "$BIG" | wc -c', { envs: { BIG: big } })).stdout.trim()).toBe(
      "100000",
    );
  });

  it("keeps a session sandbox's cd and the per-command cwd as they were", async () => {
    const session = await Sandbox.create({ ...e2b.opts, metadata: { "shellwright:commands": "session" } });
    await session.commands.run("cd /usr", { envs: { X: "1" } });
    const result = await session.commands.run('pwd; echo "${X-unset}"; cat; echo end', { envs: { Y: "y" } });
    expect(result.stdout).toBe("/usr\nunset\nend\n");
    expect((await session.commands.run("pwd", { envs: { Y: "y" }, cwd: "/etc" })).stdout).toBe("/etc\n");
    await session.kill();
  });
});
