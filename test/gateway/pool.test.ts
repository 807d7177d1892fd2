/**
 * A gateway with poolSize: over real loopback HTTP, a client's plain
 * createEnvironment gets a session the server opened ahead; a request that
 * names its own env or limits gets one opened for it; poolSize is checked
 * once at startGateway, naming the option.
 */

import { afterEach, describe, expect, it } from "vitest";
import { createEnvironment, InvalidOptionError, type Environment, type Gateway } from "../../src/index.js";
import { startTestGateway, TOKEN } from "./helpers.js";

const gateways: Gateway[] = [];
const clients: Environment[] = [];
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await Promise.allSettled(gateways.splice(0).map((gateway) => gateway.close()));
});

async function client(gateway: Gateway, extra: Record<string, unknown> = {}): Promise<Environment> {
  const env = await createEnvironment({ backend: "gateway", url: gateway.url, token: TOKEN, ...extra });
  clients.push(env);
  return env;
}

describe("gateway poolSize", () => {
  it("hands a plain create request a warm member; one with its own env gets a session opened for it", async () => {
    const gateway = await startTestGateway({ poolSize: 2, cwd: "/tmp" });
    gateways.push(gateway);
    const pool = gateway.pool!;
    await pool.ready();
    const first = await client(gateway);
    expect(pool.stats().handedOut).toBe(1);
    await first.execute("export LEFT=1; cd /");
    await first.close();
    const second = await client(gateway);
    expect(pool.stats().handedOut).toBe(1);
    expect((await second.execute('echo "${LEFT-unset}"; pwd')).output).toBe("unset\n/tmp\n");
    const own = await client(gateway, { env: { MINE: "yes" } });
    expect(pool.stats().handedOut).toBe(1);
    expect((await own.execute("echo $MINE")).output).toBe("yes\n");
    await gateway.close();
    expect(pool.closed).toBe(true);
    expect(pool.stats()).toEqual({ idle: 0, opening: 0, handedOut: 0 });
  });

  it("is checked once, naming the option and its value", async () => {
    for (const poolSize of [0, 1.5, "2", 257]) {
      await expect(startTestGateway({ poolSize: poolSize as number })).rejects.toThrow(InvalidOptionError);
      await expect(startTestGateway({ poolSize: poolSize as number })).rejects.toThrow(/poolSize/);
    }
    await expect(startTestGateway({ poolSize: 257 })).rejects.toThrow("poolSize must be at most 256, got 257");
  });

  it("refuses a backend config a pool cannot share, before it listens", async () => {
    await expect(
      startTestGateway({ poolSize: 1, backend: { backend: "docker", image: "x", containerName: "shared" } }),
    ).rejects.toThrow(/A pool cannot use containerName "shared"/);
  });
});
