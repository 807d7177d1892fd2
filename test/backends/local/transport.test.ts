/** What only the local backend does: its own process groups, files it renames itself. */

import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { createEnvironment } from "../../../src/index.js";
import { alive } from "../../helpers/processes.js";

describe("local backend", () => {
  it("keeps its files in a private directory and removes them on close", async () => {
    const env = await createEnvironment();
    const dir = dirname(env.paths.snapshot);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(env.paths.snapshot).mode & 0o777).toBe(0o600);
    await env.close();
    expect(existsSync(dir)).toBe(false);
  });

  it("ends background jobs when the session closes", async () => {
    const env = await createEnvironment();
    const r = await env.execute("sleep 300 >/dev/null 2>&1 & echo $!");
    const pid = Number(r.output.trim());
    expect(alive(pid)).toBe(true);
    await env.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(pid)).toBe(false);
  });

  it("keeps a background job running after its call returns", async () => {
    const env = await createEnvironment();
    try {
      const pid = Number((await env.execute("sleep 300 & echo $!")).output.trim());
      await env.execute("true");
      expect(alive(pid)).toBe(true);
    } finally {
      await env.close();
    }
  });

  it("runs a command longer than one argv string may be", async () => {
    const env = await createEnvironment();
    try {
      const long = "x".repeat(300_000);
      const r = await env.execute(`printf %s '${long}' | wc -c`);
      expect(r.output.trim()).toBe("300000");
      // Counted in bytes: 60 000 three-byte characters are 180 000 bytes of argv.
      const wide = "€".repeat(60_000);
      expect((await env.execute(`printf %s '${wide}' | wc -c`)).output.trim()).toBe("180000");
      expect((await env.execute("export AFTER_LONG=1; echo ok")).output).toBe("ok\n");
      expect((await env.execute("echo $AFTER_LONG")).output).toBe("1\n");
    } finally {
      await env.close();
    }
  });

  it.each([
    ["inherited", undefined],
    // `exec node app.js` from a script (a container's entrypoint) leaves this process a SHLVL of 0.
    ["0, after an exec", "0"],
    ["empty", ""],
  ])(
    "does not read ~/.bashrc when a command gets stdin (a socketpair, which bash takes for sshd); SHLVL %s",
    async (_, shlvl) => {
      const saved = process.env.SHLVL;
      if (shlvl !== undefined) process.env.SHLVL = shlvl;
      const home = mkdtempSync(join(tmpdir(), "sw-home-"));
      writeFileSync(join(home, ".bashrc"), "export FROM_BASHRC=yes\necho bashrc-ran\n");
      // Commands start with an empty environment; this bash finds the .bashrc above through HOME.
      const bash = join(home, "bash-with-home");
      writeFileSync(bash, `#!/bin/sh\nHOME=${home} exec bash "$@"\n`, { mode: 0o755 });
      const env = await createEnvironment({ env: { HOME: home }, bashPath: bash });
      try {
        const r = await env.execute('cat; echo " ${FROM_BASHRC-none}"', { stdin: "data" });
        expect(r.output).toBe("data none\n");
      } finally {
        if (saved === undefined) delete process.env.SHLVL;
        else process.env.SHLVL = saved;
        await env.close();
        rmSync(home, { recursive: true, force: true });
      }
    },
  );

  it("starts in the current directory by default", async () => {
    const env = await createEnvironment();
    try {
      expect(env.cwd).toBe(process.cwd());
      expect((await env.execute("pwd")).output).toBe(`${process.cwd()}\n`);
    } finally {
      await env.close();
    }
  });
});
