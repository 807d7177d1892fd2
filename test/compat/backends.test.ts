/** The compat entries the table makes, and how SHELLWRIGHT_TEST_BACKENDS narrows them. */

import { afterEach, describe, expect, it, vi } from "vitest";

async function freshEntries(): Promise<Array<{ name: string; enabled: boolean; ownPidNamespace?: true }>> {
  vi.resetModules();
  return (await import("./backends.js")).compatBackends;
}

/** The names of the entries enabled under `env`. */
async function enabledWith(env: Record<string, string>): Promise<string[]> {
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  return (await freshEntries()).filter((entry) => entry.enabled).map((entry) => entry.name);
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("compat entries", () => {
  it("are each backend with the fast path and without, under the names CI and the docs use", async () => {
    vi.stubEnv("SHELLWRIGHT_TEST_BACKENDS", "");
    const entries = await freshEntries();
    expect(entries.map((entry) => entry.name).sort()).toEqual(
      ["local", "local-sandbox", "gateway", "ssh", "docker", "apptainer", "modal", "daytona", "e2b"]
        .flatMap((name) => [name, `${name}-plain`])
        .sort(),
    );
    expect(entries.filter((entry) => entry.ownPidNamespace).map((entry) => entry.name)).toEqual([
      "local-sandbox",
      "local-sandbox-plain",
    ]);
  });

  it("are narrowed by SHELLWRIGHT_TEST_BACKENDS to the named ones (as .ci/run's second Node does)", async () => {
    const names = await enabledWith({
      SHELLWRIGHT_TEST_BACKENDS: "local, local-plain,gateway",
      SHELLWRIGHT_TEST_GATEWAY: "1",
    });
    expect(names).toEqual(["local", "local-plain", "gateway"]);
  });

  it("keep a backend off when its own switch is off, even if named", async () => {
    const names = await enabledWith({
      SHELLWRIGHT_TEST_BACKENDS: "docker,docker-plain,modal",
      SHELLWRIGHT_TEST_DOCKER: "0",
    });
    expect(names).toEqual(["modal"]);
  });
});
