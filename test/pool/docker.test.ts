/**
 * The pool on a real Docker Engine: each member is its own container (so
 * its own pidsLimit), a member whose container was removed under it is
 * replaced, never handed out, and close() removes every container.
 */

import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { createEnvironment, type Environment, type EnvironmentPool } from "../../src/index.js";
import { listDockerContainers, removeDockerContainers } from "../../src/backends/docker/containers.js";
import { createEnvironmentPool, poolOf } from "../../src/pool/create-pool.js";
import { DOCKER_TEST_IMAGE as image, DOCKER_TEST_ENABLED as dockerEnabled } from "../helpers/docker-test.js";

const pools: EnvironmentPool[] = [];
afterEach(async () => {
  await Promise.allSettled(pools.splice(0).map((pool) => pool.close()));
});

/** The container id each member reports for itself (its hostname). */
async function containerOf(env: Environment): Promise<string> {
  return (await env.execute("cat /etc/hostname")).output.trim();
}

/** The limit Docker enforces on a container, as the engine reports it (not what the container can read). */
function pidsLimitOf(container: string): string {
  const inspected = spawnSync("docker", ["inspect", "-f", "{{.HostConfig.PidsLimit}}", container], {
    encoding: "utf8",
  });
  expect(inspected.status, inspected.stderr).toBe(0);
  return inspected.stdout.trim();
}

describe.runIf(dockerEnabled)("pool on docker", () => {
  it("a member whose container was removed is replaced; every member has its own container and pidsLimit; close() removes them all", async () => {
    const warnings: string[] = [];
    const opened: { env: Environment; container: string }[] = [];
    const pool = poolOf(
      async () => {
        const env = await createEnvironment({ backend: "docker", image, network: false, pidsLimit: 64 });
        opened.push({ env, container: await containerOf(env) });
        return env;
      },
      { size: 2, onWarning: (m) => warnings.push(m) },
    );
    pools.push(pool);
    await pool.ready();
    expect(new Set(opened.map((o) => o.container)).size).toBe(2);
    const gone = opened[0]!;
    expect(await removeDockerContainers([gone.container])).toHaveLength(1);

    const got = await pool.acquire();
    expect(got).not.toBe(gone.env);
    // Every member, idle or handed out, is a container of its own under the limit it was opened with.
    const members = [got, ...opened.filter((o) => o !== gone).map((o) => o.env)];
    for (const container of new Set(await Promise.all(members.map(containerOf)))) {
      expect(pidsLimitOf(container)).toBe("64");
    }
    expect(warnings.join("\n")).toContain(`session ${gone.env.id}) failed its check`);
    await pool.ready();

    await pool.close();
    const left = (await listDockerContainers()).map((c) => c.id);
    for (const { container } of opened) expect(left.some((id) => id.startsWith(container))).toBe(false);
  }, 180_000);

  it("takes a config with extra labels (only Daytona's labels are refused): every member's container carries them", async () => {
    const labels = { "com.example.team": "pool-test", "com.example.run": String(process.pid) };
    const pool = await createEnvironmentPool({ backend: "docker", image, network: false, labels }, { size: 2 });
    pools.push(pool);
    await pool.ready();
    const members = [await pool.acquire(), await pool.acquire()];
    const containers = await Promise.all(members.map(containerOf));
    expect(new Set(containers).size).toBe(2);
    for (const container of containers) {
      const inspected = spawnSync(
        "docker",
        [
          "inspect",
          "-f",
          '{{index .Config.Labels "com.example.team"}} {{index .Config.Labels "com.example.run"}}',
          container,
        ],
        { encoding: "utf8" },
      );
      expect(inspected.stdout.trim()).toBe(`pool-test ${process.pid}`);
    }
    await pool.close();
  }, 180_000);
});
