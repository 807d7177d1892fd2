/**
 * A pool whose owner is SIGKILLed leaves nothing: a real node process
 * (test/fixtures/pool-owner-death.mjs, on the built dist/) fills a pool,
 * hands one member out with a background job in it, and is killed; every
 * member's state dir (local) or container (docker), the job and the
 * watchdogs must be gone within a bounded wait. The pool adds no watchdog
 * of its own: each member is a session and ends with its owner like one.
 */

import type { ChildProcess } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fastTempRoot } from "../../src/backends/local/paths.js";
import { readOwner } from "../../src/backends/shared/owner.js";
import { listDockerContainers } from "../../src/backends/docker/containers.js";
import { killAll, pidsWithCmdline } from "../helpers/proc-scan.js";
import { alive, eventually } from "../helpers/processes.js";
import { startOwnerFixture } from "../helpers/owner-fixture.js";
import { DOCKER_TEST_IMAGE as image, DOCKER_TEST_ENABLED as dockerEnabled } from "../helpers/docker-test.js";

const fixture = join(import.meta.dirname, "../fixtures/pool-owner-death.mjs");
const started = new Set<number>();
afterAll(() => killAll(started));

interface Report {
  owner: number;
  stateDir: string;
  pid: number;
  hostname: string;
  stats: { idle: number; handedOut: number };
}

async function startOwner(config: object, size: number): Promise<{ child: ChildProcess; report: Report }> {
  const { child, report } = await startOwnerFixture<Report>(fixture, [JSON.stringify({ config, size })], started);
  return { child, report };
}

/** The local state dirs whose owner file names this pid. */
function stateDirsOf(owner: number): string[] {
  const root = fastTempRoot();
  return readdirSync(root)
    .filter((name) => name.startsWith("shellwright-"))
    .map((name) => join(root, name))
    .filter((dir) => readOwner(dir)?.endsWith(`/${owner}`) === true);
}

describe("pool owner death", () => {
  it("local: every member's state dir, watchdog and background job go with a SIGKILLed owner", async () => {
    const { child, report } = await startOwner({ backend: "local" }, 2);
    started.add(report.pid);
    expect(report.stats).toMatchObject({ idle: 2, handedOut: 1 });
    const dirs = stateDirsOf(report.owner);
    expect(dirs).toHaveLength(3);
    expect(dirs).toContain(report.stateDir);
    const watchdogs = dirs.flatMap((dir) => pidsWithCmdline("shellwright-watchdog", dir));
    expect(watchdogs).toHaveLength(3);
    watchdogs.forEach((pid) => started.add(pid));
    expect(alive(report.pid)).toBe(true);

    process.kill(child.pid!, "SIGKILL");
    await eventually(() => !alive(report.pid), "the handed-out member's background job dies");
    await eventually(() => stateDirsOf(report.owner).length === 0, "every member's state dir is removed");
    await eventually(() => watchdogs.every((pid) => !alive(pid)), "every watchdog exits");
  });

  it.runIf(dockerEnabled)(
    "docker: every member's container is removed after a SIGKILLed owner",
    async () => {
      const { child, report } = await startOwner({ backend: "docker", image, network: false }, 2);
      const ours = async () =>
        (await listDockerContainers()).filter((c) => c.owner.endsWith(`/${report.owner}`)).map((c) => c.id);
      const containers = await ours();
      expect(containers).toHaveLength(3);
      expect(containers.some((id) => id.startsWith(report.hostname))).toBe(true);
      process.kill(child.pid!, "SIGKILL");
      await eventually(async () => (await ours()).length === 0, "every member's container is removed", 90_000);
    },
    180_000,
  );
});
