/**
 * No silent fallback (docs/fast-path.md): a session that cannot use the fast
 * path says why, once, and its calls still run. And the helper is picked
 * by the backend's architecture, not this machine's.
 */

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Session } from "../../../../src/core/session.js";
import { normalizeLocalConfig } from "../../../../src/backends/local/config.js";
import { LocalTransport } from "../../../../src/backends/local/transport.js";
import { sessionOptions } from "../../../../src/backends/shared/config.js";
import {
  HelperUnsupported,
  installBoxHelper,
  type BoxExec,
} from "../../../../src/backends/shared/fast-path/box-helper.js";
import { staticHelper, staticHelperFor } from "../../../../src/backends/shared/fast-path/helper-path.js";

const dirs: string[] = [];
const sessions: Session[] = [];

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "sw-unavailable-"));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A box that runs argvs here, with a `uname` that names another machine. */
function boxOn(machine: string): BoxExec {
  const bin = scratch();
  writeFileSync(join(bin, "uname"), `#!/bin/sh\necho ${machine}\n`);
  chmodSync(join(bin, "uname"), 0o755);
  return {
    spawn: () => {
      throw new Error("not used");
    },
    run: async (argv, stdin) => {
      const r = spawnSync(argv[0]!, argv.slice(1), {
        input: stdin,
        env: { PATH: `${bin}:${process.env.PATH}` },
        encoding: "utf8",
      });
      return { exitCode: r.status ?? 1, output: r.stdout + r.stderr };
    },
  };
}

describe("the helper for the backend's architecture", () => {
  it("is found by uname -m names", () => {
    expect(staticHelperFor("riscv64")).toBeUndefined();
    const here = staticHelper();
    if (here === undefined) return; // nothing built: nothing to find
    expect(staticHelperFor(here.machine)).toEqual(here);
    const arm = staticHelperFor("aarch64");
    if (arm !== undefined) {
      expect(arm.path).toMatch(/swmux-arm64-static$/);
      expect(staticHelperFor("arm64")?.path).toBe(arm.path);
    }
  });

  it.skipIf(staticHelperFor("aarch64") === undefined || process.arch !== "x64")(
    "is copied into an aarch64 box from an x64 machine",
    async () => {
      const path = await installBoxHelper(boxOn("aarch64"), staticHelper()!, scratch(), "the test box");
      expect(readFileSync(path).equals(readFileSync(staticHelperFor("aarch64")!.path))).toBe(true);
    },
  );

  it.skipIf(staticHelper() === undefined)("is refused for a machine none was built for, naming it", async () => {
    const install = installBoxHelper(boxOn("riscv64"), staticHelper()!, scratch(), "the test box");
    await expect(install).rejects.toBeInstanceOf(HelperUnsupported);
    await expect(install).rejects.toThrow(/the test box runs on riscv64, and no helper was built for it/);
  });
});

describe("a session without the fast path", () => {
  it("is told why once, and its calls run", async () => {
    const tag = randomBytes(6).toString("hex");
    const helper = join(scratch(), "swmux");
    // A helper as one exits on a kernel without pidfds: it says so on stderr and ends before its launcher.
    writeFileSync(helper, `#!/bin/sh\necho "swmux: pidfd_open unavailable (${tag})" >&2\nexit 5\n`);
    chmodSync(helper, 0o755);
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on("warning", onWarning);
    try {
      for (let i = 0; i < 2; i++) {
        const transport = new LocalTransport({ ...normalizeLocalConfig({}), fastPathHelper: helper });
        const session = await Session.open(transport, sessionOptions({ timeoutMs: 20_000 }, "/tmp"));
        sessions.push(session);
        expect(await transport.fastPathRunner?.whenReady()).toBe(false);
        expect(await session.execute("echo plain")).toMatchObject({ exitCode: 0, output: "plain\n" });
      }
      await new Promise((resolve) => setImmediate(resolve));
      const mine = warnings.filter((w) => w.includes(tag));
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatch(
        /^shellwright: no fast path: the fast-path helper ended before it was ready \(.*pidfd_open/,
      );
    } finally {
      process.off("warning", onWarning);
    }
  });
});
