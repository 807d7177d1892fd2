/**
 * What each backend declares for a named CLI session, which the CLI applies
 * without knowing backend names (src/cli/named-session.ts).
 */

import { describe, expect, it } from "vitest";
import { namedSessionPolicy } from "../../src/backends/index.js";
import type { Environment } from "../../src/core/environment.js";

const env = { paths: { snapshot: "/tmp/shellwright-ssh-abc/snapshot.sh" } } as unknown as Environment;

describe("named-session policies", () => {
  it("local: the store's directory is the state dir, and the session outlives the CLI process", () => {
    const local = namedSessionPolicy(undefined);
    expect(local.create?.({}, "dev", "/store/dev")).toEqual({ stateDir: "/store/dev", outliveOwner: true });
    expect(local.reopen?.({ backend: "local" }, "/store/dev", false)).toEqual({
      backend: "local",
      stateDir: "/store/dev",
      outliveOwner: true,
    });
    expect(local.remember?.({ backend: "local", stateDir: "/store/dev" }, env)).toEqual({ backend: "local" });
  });

  it("ssh: outlives the CLI process and finds its snapshot's directory on the host again", () => {
    const ssh = namedSessionPolicy("ssh");
    expect(ssh.create?.({ backend: "ssh", host: "h" }, "dev", "/store/dev")).toEqual({
      backend: "ssh",
      host: "h",
      outliveOwner: true,
    });
    expect(ssh.remember?.({ backend: "ssh", host: "h" }, env)).toEqual({
      backend: "ssh",
      host: "h",
      remoteTempDir: "/tmp/shellwright-ssh-abc",
    });
  });

  it("docker: a kept container named after the session, removed only by close", () => {
    const docker = namedSessionPolicy("docker");
    expect(docker.create?.({ backend: "docker", image: "i" }, "dev", "/store/dev")).toEqual({
      backend: "docker",
      image: "i",
      containerName: "shellwright-dev",
      keepContainer: true,
    });
    expect(docker.reopen?.({ backend: "docker", image: "i", keepContainer: true }, "/d", true)).toMatchObject({
      keepContainer: false,
    });
    expect(docker.reopen?.({ backend: "docker", image: "i", keepContainer: true }, "/d", false)).toMatchObject({
      keepContainer: true,
    });
  });

  it("the gateway keeps its fast path (its server decides); a backend that declares nothing keeps its config", () => {
    expect(namedSessionPolicy("gateway").keepsFastPath).toBe(true);
    expect(namedSessionPolicy("modal")).toEqual({});
  });
});
