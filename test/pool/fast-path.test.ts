/**
 * A warm member's fast path is ready when it is handed out: its first call
 * runs on the helper, not on the plain path (issue 25). The local helper
 * here starts a second late, as on a loaded machine, so a pool that counted
 * a member warm as soon as it opened would count it before its helper ran.
 */

import { readFileSync, chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { localHelperPath } from "../../src/backends/shared/fast-path/helper-path.js";
import { poolOf } from "../../src/pool/create-pool.js";
import type { EnvironmentPool } from "../../src/pool/pool.js";
import { sshTestEnabled } from "../backends/ssh/ssh-env.js";
import { HELPER_PID, LAUNCHER_PID } from "../helpers/fast-path-pids.js";
import { alive, eventually } from "../helpers/processes.js";
import { noLocalHelper, noStaticHelper, skipAllUnless } from "../helpers/native-helper.js";
import { recordingPool } from "../helpers/recording-pool.js";
import { openTransportSession, type TransportBackend, type TransportSession } from "../helpers/transport-session.js";
import { DOCKER_TEST_ENABLED as dockerEnabled } from "../helpers/docker-test.js";

const pools: EnvironmentPool[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.allSettled(pools.splice(0).map((pool) => pool.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The real helper behind a wrapper that waits a second first (the helper's environment has no PATH). */
function slowHelper(): string {
  const dir = mkdtempSync(join(tmpdir(), "sw-pool-helper-"));
  dirs.push(dir);
  const sleep = execFileSync("bash", ["-c", "command -v sleep"], { encoding: "utf8" }).trim();
  const path = join(dir, "slow-swmux");
  writeFileSync(path, `#!/bin/sh\n${sleep} 1\nexec ${localHelperPath()!} "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

/** The name of a process's parent: a fast-path launcher's parent is the helper. */
function parentName(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const parent = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1];
  return readFileSync(`/proc/${parent}/comm`, "utf8").trim();
}

/**
 * A warm pool of one member over a transport the test keeps, once the pool says it is warm: the member's transport
 * and whether its fast path was ready then.
 */
async function warmPoolOfOne<B extends TransportBackend>(
  backend: B,
  options: Record<string, unknown> = {},
  poolOptions: { checkTimeoutMs?: number } = {},
): Promise<{ pool: EnvironmentPool; transport: TransportSession<B>["transport"] }> {
  const transports: TransportSession<B>["transport"][] = [];
  const pool = poolOf(
    async () => {
      const { session, transport } = await openTransportSession(backend, options);
      transports.push(transport);
      return session;
    },
    { size: 1, ...poolOptions },
  );
  pools.push(pool);
  await pool.ready();
  expect(transports.map((transport) => transport.fastPathRunner?.ready)).toEqual([true]);
  return { pool, transport: transports[0]! };
}

describe("pool: fast-path readiness", () => {
  skipAllUnless(noLocalHelper);

  it("local: a member counts warm only once its helper is ready, and its first call runs on the helper", async () => {
    // Without the wait for the helper the member would be idle (warm) while its helper still sleeps.
    const { pool } = await warmPoolOfOne("local", { fastPathHelper: slowHelper() });
    const member = await pool.acquire();
    const launcher = Number((await member.execute(LAUNCHER_PID)).output);
    expect(parentName(launcher)).toMatch(/^swmux/);
  });

  it("local: a member whose helper died while idle is closed and replaced, never handed out", async () => {
    const warnings: string[] = [];
    const { pool, opened } = recordingPool(2, pools, warnings);
    await pool.ready();
    // The oldest idle member is the next one handed out: its helper is killed as a crash (or the OOM killer) would.
    const victim = opened[0]!;
    const helper = Number((await victim.execute(HELPER_PID)).output);
    expect(readFileSync(`/proc/${helper}/comm`, "utf8")).toMatch(/^swmux/);
    process.kill(helper, "SIGKILL");
    await eventually(() => !alive(helper), "the helper is dead");
    const got = await pool.acquire();
    // Without the helper check the victim passes (the check call runs on the plain path) and is handed out.
    expect(got).not.toBe(victim);
    expect(warnings.join("\n")).toContain(`session ${victim.id}) failed its check`);
    await eventually(() => victim.closed, "the victim is closed");
    const launcher = Number((await got.execute(LAUNCHER_PID)).output);
    expect(parentName(launcher)).toMatch(/^swmux/);
    await got.close();
  });
});

describe.runIf(dockerEnabled)("pool: fast-path readiness on docker", () => {
  skipAllUnless(noStaticHelper);

  // A docker call whose helper is not ready yet takes the plain path (a plain exec is faster than the wait).
  it("an acquired warm member's first call runs on the helper inside the container", async () => {
    const { pool, transport } = await warmPoolOfOne("docker");
    const member = await pool.acquire();
    const launcher = (await member.execute(LAUNCHER_PID)).output.trim();
    const parent = execFileSync(
      "docker",
      ["exec", transport.containerId, "sh", "-c", `cut -d' ' -f4 /proc/${launcher}/stat`],
      {
        encoding: "utf8",
      },
    ).trim();
    const comm = execFileSync("docker", ["exec", transport.containerId, "cat", `/proc/${parent}/comm`], {
      encoding: "utf8",
    }).trim();
    expect(comm).toMatch(/^swmux/);
  });
});

describe.runIf(sshTestEnabled)("pool: fast-path readiness on ssh", () => {
  skipAllUnless(noStaticHelper);

  // The helper is copied to the host in the background after the session opens: the wait covers the copy too.
  it("a member counts warm only once its helper is on the host and ready", async () => {
    const { pool } = await warmPoolOfOne("ssh", {}, { checkTimeoutMs: 30_000 });
    const member = await pool.acquire();
    expect((await member.execute("echo warm")).output).toBe("warm\n");
  });
});
