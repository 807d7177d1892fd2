/**
 * Docker Engine outages against a real engine, behind a socket proxy the test
 * cuts (test/helpers/engine-proxy.ts). Everything the backend runs goes
 * through it: the config's socketPath and DOCKER_HOST (so the docker CLI, and
 * an owner's watchdog, talk to the proxy whatever the code under test passes
 * them), while the test itself lists and removes containers on the engine's
 * own socket. Whatever an open made is gone when the open fails; close() rides
 * out a short outage; a pool's refills cut again and again leave nothing after
 * pool.close(); what an owner could not remove is found by the leftover
 * search once the owner is gone.
 */

import { execFileSync, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, createEnvironmentPool, type DockerConfig } from "../../../src/index.js";
import { removeDockerContainers } from "../../../src/backends/docker/containers.js";
import { dockerLeftovers } from "../../../src/backends/docker/leftovers.js";
import { EngineProxy } from "../../helpers/engine-proxy.js";
import { alive, eventually } from "../../helpers/processes.js";
import { pidsWithCmdline } from "../../helpers/proc-scan.js";
import { DOCKER_TEST_IMAGE as image, DOCKER_TEST_ENABLED as enabled } from "../../helpers/docker-test.js";

const run = `${process.pid}-${Date.now()}`;
const OUTAGE_MS = 1500;
const timeout = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const dockerHost = process.env.DOCKER_HOST;
const ENGINE = dockerHost?.startsWith("unix://") === true ? dockerHost.slice("unix://".length) : "/var/run/docker.sock";

/** The docker CLI on the engine's own socket, never through the proxy. */
function docker(args: string[]): string {
  return execFileSync("docker", ["-H", `unix://${ENGINE}`, ...args], { encoding: "utf8", timeout: 60_000 });
}
/** The containers a case made, by its own label, as the engine itself (not the proxy) lists them. */
function containersOf(label: string): string[] {
  return docker(["ps", "-a", "-q", "--no-trunc", "--filter", `label=com.example.outage=${label}`])
    .split("\n")
    .filter(Boolean);
}
function removeAll(label: string): void {
  const ids = containersOf(label);
  if (ids.length > 0) docker(["rm", "-f", ...ids]);
}

describe.skipIf(!enabled)("docker: engine outages (a socket proxy the test cuts)", () => {
  let proxy: EngineProxy;
  const labels: string[] = [];
  const config = (label: string, extra: Partial<DockerConfig> = {}): DockerConfig => {
    labels.push(label);
    return {
      backend: "docker",
      image,
      network: false,
      socketPath: proxy.socketPath,
      labels: { "com.example.outage": label },
      ...extra,
    };
  };
  beforeAll(async () => {
    proxy = await EngineProxy.start(ENGINE);
    process.env.DOCKER_HOST = `unix://${proxy.socketPath}`;
  });
  afterEach(() => {
    proxy.disarm();
    proxy.up();
  });
  afterAll(async () => {
    if (dockerHost === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = dockerHost;
    await proxy.close();
    for (const label of labels) removeAll(label);
  });

  /** Opens with `cut` going on beside it; a failed open must have removed what it made, an opened one is closed. */
  async function openThrough(label: string, cut: Promise<unknown>): Promise<Error | undefined> {
    const opened = await createEnvironment(config(label)).then(
      (env) => env,
      (error: unknown) => error as Error,
    );
    await cut;
    if (opened instanceof Error) {
      expect(containersOf(label), opened.message).toEqual([]);
      return opened;
    }
    expect((await opened.execute("echo usable")).output).toBe("usable\n");
    await opened.close();
    expect(containersOf(label)).toEqual([]);
    return undefined;
  }

  it.for([
    ["the CLI's create", /^POST \/v[\d.]+\/containers\/create/],
    ["the CLI's start", /^POST \/v[\d.]+\/containers\/[^/]+\/start/],
    ["the check of the container's temp dir", /^GET \/containers\/[^/]+\/json/],
    ["the session's first exec", /^POST \/containers\/[^/]+\/exec/],
  ] as const)("an open whose engine is cut at the answer to %s fails and leaves no container", async ([, at]) => {
    const label = `${run}-open-${String(at).length}-${labels.length}`;
    const outage = proxy.cutAtAnswer(at, OUTAGE_MS);
    const failed = await openThrough(label, Promise.race([outage.then((over) => over), timeout(120_000)]));
    expect(failed).toBeInstanceOf(Error);
  });

  // Counted from the CLI's create request, not from the call: on a loaded machine the CLI alone can take longer
  // than 300 ms to start, and a cut before the create only tests a failed open that made nothing.
  it.for([100, 300])(
    "an open cut %i ms after it asked for its container either opens or fails, and leaves no container",
    async (delayMs) => {
      const label = `${run}-open-${delayMs}ms`;
      const cut = proxy
        .requestSeen(/^POST \/v[\d.]+\/containers\/create/)
        .then(() => timeout(delayMs))
        .then(() => proxy.outage(OUTAGE_MS));
      await openThrough(label, Promise.race([cut, timeout(120_000)]));
    },
  );

  it("close() during an outage waits for the engine and removes the container", async () => {
    const label = `${run}-close`;
    const env = await createEnvironment(config(label));
    expect(containersOf(label)).toHaveLength(1);
    const outage = proxy.outage(OUTAGE_MS);
    await env.close();
    await outage;
    expect(containersOf(label)).toEqual([]);
  });

  it("5 cuts during pool refills leave no container after pool.close()", async () => {
    const label = `${run}-pool`;
    const warnings: string[] = [];
    const pool = await createEnvironmentPool(config(label), { size: 2, onWarning: (m) => warnings.push(m) });
    try {
      for (let cut = 0; cut < 5; cut++) {
        const member = await pool.acquire();
        await member.close();
        // The refill starts 100 ms after a release; the cut lands inside it.
        await new Promise((resolve) => setTimeout(resolve, 150 + cut * 100));
        await proxy.outage(OUTAGE_MS);
      }
    } finally {
      await pool.close();
    }
    expect(containersOf(label), warnings.join("\n")).toEqual([]);
  }, 240_000);

  it("a container its owner could not remove (the engine stayed away) is found and removed as a leftover once the owner is gone", async () => {
    const label = `${run}-owner`;
    const owner = spawn(
      process.execPath,
      [new URL("../../fixtures/docker-close-owner.mjs", import.meta.url).pathname, JSON.stringify(config(label))],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    const lines = createInterface({ input: owner.stdout! })[Symbol.asyncIterator]();
    const exited = new Promise((resolve) => owner.once("exit", resolve));
    try {
      const { container } = JSON.parse((await lines.next()).value as string) as { container: string };
      expect(containersOf(label)).toHaveLength(1);
      proxy.cut();
      owner.stdin!.write("close\n");
      const answer = JSON.parse((await lines.next()).value as string) as { error?: string };
      expect(answer.error).toContain("Could not remove docker container");
      expect(answer.error).toContain("shellwright sessions --prune");
      // Its watchdog (which rm -f's the container when the owner is gone) tries too, with the engine still away.
      const watchdogs = pidsWithCmdline("shellwright-watchdog", container);
      expect(watchdogs).toHaveLength(1);
      await exited;
      await eventually(() => !alive(watchdogs[0]!), "the watchdog to have tried");
      // The container is left, its owner gone.
      expect(containersOf(label)).toHaveLength(1);
      proxy.up();
      const name = docker(["inspect", "-f", "{{.Name}}", container]).trim().replace(/^\//, "");
      // What `shellwright sessions --prune` lists; only this case's own container is removed here. (Another
      // test's prune running meanwhile may have found and removed it first: then it is gone, which is the point.)
      const found = (await dockerLeftovers.find()).map((leftover) => leftover.what);
      if (found.includes(name)) expect(await removeDockerContainers([name])).toEqual([name]);
      expect(containersOf(label)).toEqual([]);
    } finally {
      proxy.up();
      if (owner.exitCode === null) owner.kill("SIGKILL");
    }
  }, 120_000);
});
