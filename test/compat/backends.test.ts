/** The compat entries the table makes, and how SHELLWRIGHT_TEST_BACKENDS narrows them. */

import { afterEach, describe, expect, it, vi } from "vitest";

async function freshEntries(): Promise<Array<{ name: string; enabled: boolean; ownPidNamespace?: true }>> {
  vi.resetModules();
  return (await import("./backends.js")).compatBackends;
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("compat entries", () => {
  it("are each backend with the fast path and without, under the names CI and the docs use", async () => {
    vi.stubEnv("SHELLWRIGHT_TEST_BACKENDS", "");
    const entries = await freshEntries();
    expect(entries.map((entry) => entry.name).sort()).toEqual(
      ["local", "local-sandbox", "gateway", "ssh", "docker", "apptainer", "modal", "daytona"]
        .flatMap((name) => [name, `${name}-plain`])
        .sort(),
    );
    expect(entries.filter((entry) => entry.ownPidNamespace).map((entry) => entry.name)).toEqual([
      "local-sandbox",
      "local-sandbox-plain",
    ]);
  });

  it("are narrowed by SHELLWRIGHT_TEST_BACKENDS to the named ones (as .ci/run's second Node does)", async () => {
    vi.stubEnv("SHELLWRIGHT_TEST_BACKENDS", "local, local-plain,gateway");
    vi.stubEnv("SHELLWRIGHT_TEST_GATEWAY", "1");
    const entries = await freshEntries();
    expect(entries.filter((entry) => entry.enabled).map((entry) => entry.name)).toEqual([
      "local",
      "local-plain",
      "gateway",
    ]);
  });

  it("keep a backend off when its own switch is off, even if named", async () => {
    vi.stubEnv("SHELLWRIGHT_TEST_BACKENDS", "docker,docker-plain,modal");
    vi.stubEnv("SHELLWRIGHT_TEST_DOCKER", "0");
    const entries = await freshEntries();
    expect(entries.filter((entry) => entry.enabled).map((entry) => entry.name)).toEqual(["modal"]);
  });
});
