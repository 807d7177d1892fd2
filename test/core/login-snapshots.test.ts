/**
 * The login snapshot, captured once per origin (issue 37.8): a login profile
 * that counts its own runs (it appends a line to a file) runs once for every
 * session opened from the same origin, at once or one after another, and
 * again once a profile file changed; `reuseLoginSnapshot: false` runs it for
 * every session. Real sessions: local (fast and plain path) and ssh (the test
 * sshd on this machine, so the profile and the count are files here too).
 * Few sessions each: every open runs this machine's /etc/profile too.
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEnvironment, type Environment, type EnvironmentConfig } from "../../src/index.js";
import { sshTestConfig, sshTestEnabled } from "../backends/ssh/ssh-env.js";

const homes: string[] = [];
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

/** A HOME whose login profile counts its runs and sets a variable, a function and an alias. */
function countingHome(): { home: string; profile: string; runs: () => number } {
  const home = mkdtempSync(join(tmpdir(), "sw-login-"));
  homes.push(home);
  const profile = join(home, ".bash_profile");
  writeFileSync(
    profile,
    `echo run >> ${home}/count\nexport FROM_PROFILE=yes\nprofile_fn() { echo fn; }\nalias profile_al='echo al'\n`,
  );
  const runs = (): number => {
    try {
      return readFileSync(join(home, "count"), "utf8").split("\n").length - 1;
    } catch {
      return 0;
    }
  };
  return { home, profile, runs };
}

const STATE = "echo $FROM_PROFILE; profile_fn; shopt -s expand_aliases; profile_al; pwd";

interface Backend {
  name: string;
  enabled: boolean;
  config: (home: string) => EnvironmentConfig;
  /** The whole surface; the plain path only for what the path changes. */
  full: boolean;
}

const BACKENDS: Backend[] = [
  { name: "local", enabled: true, full: true, config: (home) => ({ backend: "local", env: { HOME: home } }) },
  {
    name: "local-plain",
    enabled: true,
    full: false,
    config: (home) => ({ backend: "local", fastPath: false, env: { HOME: home } }),
  },
  {
    name: "ssh",
    enabled: sshTestEnabled,
    full: true,
    config: (home) => (sshTestEnabled ? { ...sshTestConfig(), env: { HOME: home } } : { backend: "local" }),
  },
];

async function openMany(config: EnvironmentConfig, count: number, cwd = "/tmp"): Promise<Environment[]> {
  return Promise.all(Array.from({ length: count }, () => createEnvironment({ ...config, cwd })));
}

async function closeAll(sessions: Environment[]): Promise<void> {
  await Promise.all(sessions.map((session) => session.close()));
}

describe.each(BACKENDS)("the login snapshot ($name)", ({ enabled, config, full }) => {
  it("runs a profile once for sessions opened at once and after, and again once it changed", async (context) => {
    if (!enabled) context.skip("the test sshd is not running");
    const { home, profile, runs } = countingHome();
    const first = await openMany(config(home), 3);
    try {
      expect(runs()).toBe(1);
      for (const session of first) expect((await session.execute(STATE)).output).toBe("yes\nfn\nal\n/tmp\n");
    } finally {
      await closeAll(first);
    }
    const [later] = await openMany(config(home), 1);
    try {
      expect(runs()).toBe(1);
      // A session that starts from the capture has the state a login gives, keeps what it changes, and its
      // snapshot (the capture's bytes: variables, secrets among them) is private like any other.
      await later!.execute("export MINE=1; cd /");
      expect((await later!.execute(`echo $MINE; ${STATE}`)).output).toBe("1\nyes\nfn\nal\n/\n");
      expect((await later!.execute(`stat -c %a ${later!.paths.snapshot}`)).output).toBe("600\n");
    } finally {
      await later!.close();
    }
    // The same size, a new mtime: the profile runs again (and its new content counts).
    writeFileSync(profile, readFileSync(profile, "utf8").replace("FROM_PROFILE=yes", "FROM_PROFILE=new"));
    utimesSync(profile, new Date(), new Date(Date.now() + 5000));
    const [changed] = await openMany(config(home), 1);
    try {
      expect(runs()).toBe(2);
      expect((await changed!.execute("echo $FROM_PROFILE")).output).toBe("new\n");
    } finally {
      await changed!.close();
    }
    // A profile file that did not exist before (~/.bashrc) is a change too.
    writeFileSync(join(home, ".bashrc"), "export FROM_BASHRC=yes\n");
    const [created] = await openMany(config(home), 1);
    try {
      expect(runs()).toBe(3);
    } finally {
      await created!.close();
    }
  });

  it.runIf(full)("runs the profile for every session with reuseLoginSnapshot: false", async (context) => {
    if (!enabled) context.skip("the test sshd is not running");
    const { home, runs } = countingHome();
    const sessions = await openMany({ ...config(home), reuseLoginSnapshot: false } as EnvironmentConfig, 2);
    try {
      expect(runs()).toBe(2);
      expect((await sessions[1]!.execute(STATE)).output).toBe("yes\nfn\nal\n/tmp\n");
    } finally {
      await closeAll(sessions);
    }
  });

  it.runIf(full)("keeps origins apart: another environment or another cwd runs its own login", async (context) => {
    if (!enabled) context.skip("the test sshd is not running");
    const { home, runs } = countingHome();
    const base = config(home);
    const env = (base as { env: Record<string, string> }).env;
    const sessions = [
      await createEnvironment({ ...base, cwd: "/tmp" }),
      await createEnvironment({ ...base, cwd: "/" }),
      await createEnvironment({ ...base, cwd: "/tmp", env: { ...env, OTHER: "1" } } as EnvironmentConfig),
    ];
    try {
      expect(runs()).toBe(3);
      expect((await sessions[2]!.execute("echo $OTHER")).output).toBe("1\n");
      expect((await sessions[0]!.execute("echo ${OTHER-unset}")).output).toBe("unset\n");
    } finally {
      await closeAll(sessions);
    }
  });

  it.runIf(full)("refuses a cwd removed since the capture, as the login does", async (context) => {
    if (!enabled) context.skip("the test sshd is not running");
    const { home, runs } = countingHome();
    const cwd = join(home, "work");
    mkdirSync(cwd);
    const [first] = await openMany(config(home), 1, cwd);
    await first!.close();
    rmSync(cwd, { recursive: true });
    await expect(openMany(config(home), 1, cwd)).rejects.toMatchObject({ option: "cwd" });
    expect(runs()).toBe(2);
  });
});

describe("reuseLoginSnapshot", () => {
  it("is validated, naming the option and the value", async () => {
    await expect(createEnvironment({ backend: "local", reuseLoginSnapshot: "no" } as never)).rejects.toThrow(
      /reuseLoginSnapshot must be true or false, got "no"/,
    );
    await expect(
      createEnvironment({ backend: "ssh", host: "localhost", reuseLoginSnapshot: 0 } as never),
    ).rejects.toThrow(/reuseLoginSnapshot must be true or false, got 0/);
  });
});
