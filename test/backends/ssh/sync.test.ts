/**
 * File sync over SSH against the real test sshd: rsync runs for real, behind
 * a wrapper that logs each invocation (and fails on demand), so "no rsync
 * process" is counted, not assumed.
 */

import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEnvironment, type Environment, type SshConfig } from "../../../src/index.js";
import { sshTestConfig, sshTestEnabled } from "./ssh-env.js";

describe.skipIf(!sshTestEnabled)("ssh file sync", () => {
  let work: string;
  let local: string;
  let remoteRoot: string;
  let rsyncLog: string;
  let failFlag: string;
  let wrapper: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "sw-ssh-sync-"));
    rsyncLog = join(work, "rsync.log");
    failFlag = join(work, "fail");
    wrapper = join(work, "rsync-wrapper");
    await writeFile(
      wrapper,
      `#!/bin/sh\nprintf '%s\\n' "$*" >> '${rsyncLog}'\n[ -e '${failFlag}' ] && { echo 'rsync: simulated failure' >&2; exit 12; }\nexec rsync "$@"\n`,
      { mode: 0o755 },
    );
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  beforeEach(async () => {
    local = await mkdtemp(join(work, "local-"));
    // The "remote" is this machine too (sshd on loopback), in its own directory.
    remoteRoot = await mkdtemp(join(work, "remote-"));
    await mkdir(join(local, "skills/sub"), { recursive: true });
    await writeFile(join(local, "token.json"), '{"token":"one"}', { mode: 0o644 });
    await writeFile(join(local, "skills/a.md"), "alpha");
    await writeFile(join(local, "skills/run.sh"), "#!/bin/sh\n", { mode: 0o750 });
    await writeFile(join(local, "skills/sub/b.md"), "beta");
    await writeFile(rsyncLog, "");
    await rm(failFlag, { force: true });
  });

  function config(sync: Partial<NonNullable<SshConfig["sync"]>> = {}): SshConfig {
    return {
      ...sshTestConfig(),
      rsyncPath: wrapper,
      sync: {
        files: [{ local: join(local, "token.json"), remote: `${remoteRoot}/creds/token.json` }],
        directories: [{ local: join(local, "skills"), remote: `${remoteRoot}/skills` }],
        intervalMs: 0,
        ...sync,
      },
    };
  }

  const rsyncCalls = async (): Promise<string[]> => (await readFile(rsyncLog, "utf8")).split("\n").filter(Boolean);

  async function withSession(
    cfg: SshConfig,
    fn: (env: Environment, warnings: string[]) => Promise<void>,
  ): Promise<void> {
    const warnings: string[] = [];
    const env = await createEnvironment({ ...cfg, onWarning: (message) => warnings.push(message) });
    try {
      await fn(env, warnings);
    } finally {
      await env.close();
    }
  }

  it("syncs before the first command, then transfers only what changed", async () => {
    await withSession(config(), async (env) => {
      const first = await env.execute(
        `cat ${remoteRoot}/creds/token.json; echo; stat -c '%a %n' ${remoteRoot}/creds/token.json ${remoteRoot}/skills/run.sh; find ${remoteRoot}/skills -type f | sort`,
      );
      expect(first.output).toBe(
        `{"token":"one"}\n600 ${remoteRoot}/creds/token.json\n750 ${remoteRoot}/skills/run.sh\n${remoteRoot}/skills/a.md\n${remoteRoot}/skills/run.sh\n${remoteRoot}/skills/sub/b.md\n`,
      );
      expect(await rsyncCalls()).toHaveLength(2);

      // Unchanged: no rsync process at all, over several calls.
      for (let i = 0; i < 3; i++) expect((await env.execute("true")).exitCode).toBe(0);
      expect(await rsyncCalls()).toHaveLength(2);

      // A changed credential: one transfer, of that file only.
      await writeFile(join(local, "token.json"), '{"token":"two"}');
      expect((await env.execute(`cat ${remoteRoot}/creds/token.json`)).output).toBe('{"token":"two"}');
      const afterToken = await rsyncCalls();
      expect(afterToken).toHaveLength(3);
      expect(afterToken[2]).toContain("token.json");
      expect(afterToken[2]).not.toContain("skills");

      // A changed file in the directory: one mirror of the directory.
      await writeFile(join(local, "skills/sub/b.md"), "beta two");
      expect((await env.execute(`cat ${remoteRoot}/skills/sub/b.md`)).output).toBe("beta two");
      const afterSkill = await rsyncCalls();
      expect(afterSkill).toHaveLength(4);
      expect(afterSkill[3]).toContain("--delete");
      expect(afterSkill[3]).toContain(`${remoteRoot}/skills/`);

      // The same size, within the same second: still transferred (rsync's own
      // quick check compares whole seconds unless told otherwise).
      await writeFile(join(local, "skills/sub/b.md"), "beta TWO");
      expect((await env.execute(`cat ${remoteRoot}/skills/sub/b.md`)).output).toBe("beta TWO");
      expect(await rsyncCalls()).toHaveLength(5);

      // Deleted locally: deleted remotely (the directory by rsync --delete, the single file by rm).
      await rm(join(local, "skills/a.md"));
      await rm(join(local, "token.json"));
      const listing = await env.execute(`find ${remoteRoot} -type f | sort`);
      expect(listing.output).toBe(`${remoteRoot}/skills/run.sh\n${remoteRoot}/skills/sub/b.md\n`);
      expect(await rsyncCalls()).toHaveLength(6);

      // A mode change is a change too.
      await chmod(join(local, "skills/run.sh"), 0o700);
      expect((await env.execute(`stat -c %a ${remoteRoot}/skills/run.sh`)).output).toBe("700\n");
    });
  });

  it("a failed rsync warns, the command still runs, and the next call resyncs everything", async () => {
    await withSession(config(), async (env, warnings) => {
      await env.execute("true");
      expect(await rsyncCalls()).toHaveLength(2);

      await writeFile(failFlag, "");
      await writeFile(join(local, "skills/a.md"), "alpha two");
      const during = await env.execute("echo ran");
      expect(during).toMatchObject({ exitCode: 0, output: "ran\n" });
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/File sync failed.*rsync: simulated failure/s);

      // The remote side was wiped meanwhile: only a resync from scratch restores it.
      await rm(failFlag);
      await rm(remoteRoot, { recursive: true, force: true });
      const before = (await rsyncCalls()).length;
      const after = await env.execute(`cat ${remoteRoot}/skills/a.md; echo; cat ${remoteRoot}/creds/token.json`);
      expect(after.output).toBe('alpha two\n{"token":"one"}');
      expect((await rsyncCalls()).length - before).toBe(2);
      expect(warnings).toHaveLength(1);
    });
  });

  it("force transfers everything before every command", async () => {
    await withSession(config({ force: true }), async (env) => {
      for (let i = 0; i < 3; i++) await env.execute("true");
      expect(await rsyncCalls()).toHaveLength(6);
    });
  });

  it("relative remote paths land in the remote home", async () => {
    const name = `.shellwright-sync-test-${Date.now()}`;
    const cfg = config({
      files: [{ local: join(local, "token.json"), remote: `~/${name}/token.json` }],
      directories: [],
    });
    await withSession(cfg, async (env) => {
      try {
        expect((await env.execute(`cat "$HOME/${name}/token.json"`)).output).toBe('{"token":"one"}');
      } finally {
        await env.execute(`rm -rf "$HOME/${name}"`);
      }
    });
  });
});
