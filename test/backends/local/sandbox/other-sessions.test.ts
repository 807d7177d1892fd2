/**
 * A sandboxed session cannot read another session's state (issue 22 point 2):
 * a snapshot holds the session's variables, its `env` secrets included. The
 * adversary greps for the other session's secret wherever the state may be:
 * $XDG_RUNTIME_DIR (the default root when it is set), a state dir given
 * explicitly elsewhere, tmpdir() when it is not /tmp, and $SHELLWRIGHT_HOME
 * (named sessions, whose state.json may hold a gateway token). Each place is
 * first shown to hold the secret, from the host.
 */

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../../../src/index.js";
import { executeOn, HAVE_BWRAP, makeWorld, open, PATHS, sandboxFor, SKIP_REASON, skipUnlessPath } from "./fixture.js";

/** True when a file under `dir` holds `needle`, as a host process sees it. */
const hostFinds = (dir: string, needle: string): boolean => {
  try {
    return execFileSync("grep", ["-rl", needle, dir], { encoding: "utf8" }).trim() !== "";
  } catch {
    return false;
  }
};

describe.skipIf(!HAVE_BWRAP)(`local sandbox and other sessions' state (${HAVE_BWRAP ? "bwrap" : SKIP_REASON})`, () => {
  const world = makeWorld();
  const saved = {
    XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR,
    TMPDIR: process.env.TMPDIR,
    HOME: process.env.SHELLWRIGHT_HOME,
  };
  const others: Environment[] = [];
  const secret = `OTHER-${world.secret}`;
  const xdg = join(world.root, "xdg");
  const tmp = join(world.root, "tmp");
  const home = join(world.root, "home");
  const explicit = join(world.root, "explicit-state");

  beforeAll(async () => {
    for (const dir of [xdg, tmp, home]) mkdirSync(dir, { mode: 0o700 });
    process.env.XDG_RUNTIME_DIR = xdg;
    process.env.TMPDIR = tmp;
    process.env.SHELLWRIGHT_HOME = home;
    // Two other sessions, unsandboxed, holding the secret in their env: one in $XDG_RUNTIME_DIR, one elsewhere.
    for (const stateDir of [undefined, explicit]) {
      const other = await createEnvironment({
        backend: "local",
        cwd: world.work,
        env: { API_TOKEN: secret },
        ...(stateDir === undefined ? {} : { stateDir }),
      });
      others.push(other);
      await other.execute("export ALSO=1"); // the snapshot is written
    }
    // What another process's named session and tmpdir() state would leave.
    mkdirSync(join(home, "sessions", "other"), { recursive: true });
    writeFileSync(join(home, "sessions", "other", "state.json"), JSON.stringify({ config: { token: secret } }));
    mkdirSync(join(tmp, "shellwright-other"));
    writeFileSync(join(tmp, "shellwright-other", "snapshot.sh"), `export API_TOKEN=${secret}\n`);
  });

  afterAll(async () => {
    for (const other of others) await other.close();
    for (const [name, value] of Object.entries({
      XDG_RUNTIME_DIR: saved.XDG_RUNTIME_DIR,
      TMPDIR: saved.TMPDIR,
      SHELLWRIGHT_HOME: saved.HOME,
    })) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    world.cleanup();
  });

  it.for(PATHS)(
    "finds no other session of this process under a writable path that brings the runtime dir back ($name)",
    { timeout: 60_000 },
    async ({ fastPath }, context) => {
      skipUnlessPath(context, fastPath);
      // `writable` inside a covered dir is bound back over its cover (that is how a user lets a session reach
      // one host socket); the state dirs this process's sessions keep there stay covered.
      const boxed = await createEnvironment({
        backend: "local",
        cwd: world.work,
        fastPath,
        sandbox: { ...sandboxFor(world), writable: [".", xdg] },
      });
      const half = Math.floor(secret.length / 2);
      try {
        expect(hostFinds(xdg, secret)).toBe(true);
        const r = await executeOn(
          boxed,
          fastPath,
          `a=${secret.slice(0, half)} b=${secret.slice(half)}; grep -rl "$a$b" ${xdg} 2>/dev/null | head -3; echo done`,
        );
        expect(r.output).toBe("done\n");
        expect((await executeOn(boxed, fastPath, `touch ${xdg}/mine && echo wrote`)).output).toBe("wrote\n");
      } finally {
        await boxed.close();
      }
    },
  );

  it.for(PATHS)(
    "finds the secret in none of the places another session keeps state ($name)",
    { timeout: 60_000 },
    async ({ fastPath }, context) => {
      skipUnlessPath(context, fastPath);
      const places = [xdg, explicit, tmp, home];
      for (const place of places) expect(hostFinds(place, secret), place).toBe(true);
      const boxed = await open(world, true, undefined, fastPath);
      // The secret in two halves: the command's own text (the fast path keeps it in a file of the session's state
      // dir, which the grep walks too) must not hold the whole of it.
      const half = Math.floor(secret.length / 2);
      const needle = `a=${secret.slice(0, half)} b=${secret.slice(half)}; grep -rl "$a$b"`;
      try {
        for (const place of places) {
          const r = await executeOn(boxed, fastPath, `${needle} ${place} 2>/dev/null | head -3; echo done`);
          expect(r.output, place).toBe("done\n");
        }
        // The session's own state stays where it works: the next call still sees what this one left.
        await boxed.execute("export MINE=kept");
        expect((await executeOn(boxed, fastPath, 'echo "$MINE"')).output).toBe("kept\n");
        // And $TMPDIR, covered, is still a place to write, as /tmp is.
        expect((await executeOn(boxed, fastPath, 'f=$(mktemp) && echo ok > "$f" && cat "$f"')).output).toBe("ok\n");
      } finally {
        await boxed.close();
      }
    },
  );
});
