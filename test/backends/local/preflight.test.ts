/** src/backends/local/preflight.ts: a bash too old or missing fails the session's start with one line. */

import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BackendUnavailableError, createEnvironment, InvalidOptionError } from "../../../src/index.js";
import { checkBash } from "../../../src/backends/local/preflight.js";

const BASH_32 = join(import.meta.dirname, "../../fixtures/bash-3.2-standin");

async function startError(config: Record<string, unknown>): Promise<Error> {
  const error = await createEnvironment({ backend: "local", ...config }).then(
    async (env) => {
      await env.close();
      throw new Error("the session started");
    },
    (error: unknown) => error as Error,
  );
  return error;
}

describe("the local backend's preflight", () => {
  it("refuses bash 3.2 at bashPath in one line naming the option, the path and what to install", async () => {
    const error = await startError({ bashPath: BASH_32 });
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe("bashPath");
    expect(error.message).toBe(
      `The local backend needs bash 4.1 or later; bashPath ${BASH_32} is bash 3.2.57(1)-release. ` +
        'Install a newer bash (macOS: brew install bash) and set bashPath to it, e.g. bashPath: "/opt/homebrew/bin/bash".',
    );
  });

  it("refuses bash 3.2 found on PATH as an unavailable backend, pointing at bashPath", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-old-bash-"));
    symlinkSync(BASH_32, join(dir, "bash"));
    const path = process.env.PATH;
    process.env.PATH = `${dir}:${path}`;
    try {
      const error = await startError({});
      expect(error).toBeInstanceOf(BackendUnavailableError);
      expect(error.message).toMatch(
        /^The local backend needs bash 4\.1 or later; \S+\/bash \(the first bash on PATH\) is bash 3\.2\.57/,
      );
      expect(error.message).toContain("set bashPath");
      expect(error.message).not.toContain("\n");
    } finally {
      process.env.PATH = path;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says when bashPath is not bash or cannot be run", async () => {
    expect((await startError({ bashPath: "/bin/true" })).message).toContain(
      "bashPath /bin/true is not bash (it printed no $BASH_VERSION)",
    );
    expect((await startError({ bashPath: "/nonexistent/bash" })).message).toMatch(
      /bashPath \/nonexistent\/bash could not be run \(.*ENOENT/,
    );
  });

  it("takes a bash whose ~/.bashrc prints, run where SHLVL is unset (a container's node, a service)", async () => {
    // Node gives a child's stdin as a socket; bash then reads ~/.bashrc as if sshd ran it, unless SHLVL says it
    // is nested. The probe saw the .bashrc's line before the version and said "is not bash".
    const home = mkdtempSync(join(tmpdir(), "sw-preflight-home-"));
    const bash = join(home, "bash-with-home");
    writeFileSync(join(home, ".bashrc"), "echo welcome\n");
    writeFileSync(bash, `#!/bin/sh\nHOME=${home} exec bash "$@"\n`, { mode: 0o755 });
    const shlvl = process.env.SHLVL;
    delete process.env.SHLVL;
    try {
      await expect(checkBash(bash, true)).resolves.toBeUndefined();
    } finally {
      if (shlvl === undefined) delete process.env.SHLVL;
      else process.env.SHLVL = shlvl;
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("checks a good bash once per process", async () => {
    const bash = "/bin/bash";
    const first = checkBash(bash, true);
    await first;
    expect(checkBash(bash, true)).toBe(first);
  });

  it("lets a session start when the probe only ran out of time, and probes again next time", async () => {
    // Under load a bash start can outlast the probe (stop 28's CI run): that proves nothing about the version.
    const dir = mkdtempSync(join(tmpdir(), "sw-slow-bash-"));
    const slow = join(dir, "bash");
    writeFileSync(slow, "#!/bin/sh\nexec sleep 5\n", { mode: 0o755 });
    try {
      const first = checkBash(slow, true, 100);
      await expect(first).resolves.toBeUndefined();
      const again = checkBash(slow, true, 100);
      expect(again).not.toBe(first);
      // Settled before the fake bash is removed: a probe of a missing file would fail, unawaited.
      await expect(again).resolves.toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names the signal that killed a probe", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-killed-bash-"));
    const killed = join(dir, "bash");
    writeFileSync(killed, "#!/bin/sh\nkill -TERM $$\n", { mode: 0o755 });
    try {
      await expect(checkBash(killed, true)).rejects.toThrow(
        /could not be run \(Command failed: .*: killed by SIGTERM\)/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
