/** Pool options and pool-incompatible backend options fail at createEnvironmentPool, naming the option and value. */

import { describe, expect, it } from "vitest";
import {
  createEnvironmentPool,
  InvalidOptionError,
  type EnvironmentConfig,
  type PoolOptions,
} from "../../src/index.js";

async function refusal(config: object, options: object): Promise<InvalidOptionError> {
  const error: unknown = await createEnvironmentPool(config as EnvironmentConfig, options as PoolOptions).then(
    async (pool) => {
      await pool.close();
      throw new Error("the pool was created");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidOptionError);
  return error as InvalidOptionError;
}

describe("createEnvironmentPool options", () => {
  it.each([
    [{}, "size", /size is required/],
    [{ size: 0 }, "size", /size must be a positive integer, got 0/],
    [{ size: 1.5 }, "size", /got 1\.5/],
    [{ size: "3" }, "size", /got "3"/],
    [{ size: 257 }, "size", /at most 256, got 257/],
    [{ size: 1, refillConcurrency: 0 }, "refillConcurrency", /refillConcurrency must be a positive integer, got 0/],
    [{ size: 1, checkTimeoutMs: -1 }, "checkTimeoutMs", /checkTimeoutMs .* got -1/],
    [{ size: 1, onWarning: "log" }, "onWarning", /onWarning must be a function, got "log"/],
    [{ size: 1, sise: 2 }, "sise", /Unknown pool option "sise"; known options: size/],
  ])("%j is refused on %s", async (options, option, message) => {
    const error = await refusal({ backend: "local" }, options);
    expect(error.option).toBe(option);
    expect(error.message).toMatch(message);
  });

  it.each([
    [
      { backend: "docker", containerName: "shared" },
      "containerName",
      /containerName "shared": every member needs a container/,
    ],
    [{ backend: "docker", keepContainer: true }, "keepContainer", /keepContainer true/],
    [{ backend: "local", stateDir: "/tmp/x" }, "stateDir", /stateDir "\/tmp\/x"/],
    [{ backend: "local", outliveOwner: true }, "outliveOwner", /outliveOwner true/],
    [{ backend: "ssh", host: "h", outliveOwner: true }, "outliveOwner", /outliveOwner true/],
    [{ backend: "daytona", name: "agent-1" }, "name", /name "agent-1"/],
    [{ backend: "daytona", labels: { team: "a" } }, "labels", /labels/],
    [{ backend: "daytona", onClose: "stop" }, "onClose", /onClose "stop"/],
  ])("a config that would share a member's state is refused: %j", async (config, option, message) => {
    const error = await refusal(config, { size: 1 });
    expect(error.option).toBe(option);
    expect(error.message).toMatch(message);
  });

  it("refuses an option only for the backend that declares it: elsewhere the backend's own check answers", async () => {
    // Daytona's `labels` and `name` resume a shared sandbox; docker's labels are harmless, and local has no `name`.
    const docker = await refusal({ backend: "docker", image: 42, labels: { team: "a" } }, { size: 1 });
    expect(docker.option).toBe("image");
    const local = await refusal({ backend: "local", name: "x", onClose: "stop" }, { size: 1 });
    expect(local.message).toMatch(/Unknown local backend option "name"|unknown.*name/i);
    expect(local.message).not.toMatch(/A pool cannot use/);
  });

  it("a config the backend refuses fails at creation, with the backend's error", async () => {
    expect((await refusal({ backend: "nope" }, { size: 1 })).option).toBe("backend");
    expect((await refusal({ backend: "local", timeoutMs: -5 }, { size: 1 })).option).toBe("timeoutMs");
  });
});
