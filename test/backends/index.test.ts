/** createEnvironment's own checks (src/backends/index.ts), before a backend opens anything. */

import { describe, expect, it } from "vitest";
import { createEnvironment, InvalidOptionError } from "../../src/index.js";
import {
  BACKENDS,
  backendsTaking,
  DEFAULT_BACKEND,
  poolRefusal,
  requiredOptionExample,
  sharesHostFiles,
} from "../../src/backends/index.js";

describe("createEnvironment", () => {
  it("blames a config with another backend's option and no `backend` on the missing backend", async () => {
    const error = await createEnvironment({ host: "build-box" } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toMatchObject({ option: "host" });
    expect((error as Error).message).toBe(
      '"host" is an option of the ssh backend, but the config names no "backend" and the default, local, takes no "host"; add "backend": "ssh"',
    );
    await expect(createEnvironment({ image: "debian:bookworm" } as never)).rejects.toThrow(
      /"image" is an option of the docker, .* and daytona backends.*add "backend": "docker" \(or another of those\)/,
    );
  });

  it("keeps the local backend's own words for a key no backend takes, or when `backend: local` was given", async () => {
    await expect(createEnvironment({ frobnicate: 1 } as never)).rejects.toThrow(
      'Unknown local backend option "frobnicate"',
    );
    await expect(createEnvironment({ backend: "local", host: "x" } as never)).rejects.toThrow(
      'Unknown local backend option "host"',
    );
  });
});

describe("the table of backend records", () => {
  it("asks only the config's own backend what a pool refuses: docker labels pass, Daytona's do not", () => {
    const labels = { team: "a" };
    expect(poolRefusal({ backend: "docker", image: "debian:bookworm", labels })).toBeUndefined();
    expect(poolRefusal({ backend: "daytona", labels })).toMatchObject({ key: "labels", value: labels });
    expect(poolRefusal({ backend: "docker", containerName: "c" })).toMatchObject({ key: "containerName" });
    // The default backend's record answers for a config without `backend`.
    expect(poolRefusal({ stateDir: "/tmp/x" })).toMatchObject({ key: "stateDir" });
    expect(poolRefusal({ workspace: "/tmp/ws" })).toMatchObject({ key: "workspace" });
  });

  it("answers from the records: the default written once, who takes an option, who sees this machine's files", () => {
    expect(DEFAULT_BACKEND).toBe("local");
    expect(BACKENDS[0]).toBe(DEFAULT_BACKEND);
    expect(backendsTaking("image")).toEqual(["docker", "apptainer", "modal", "daytona"]);
    expect(backendsTaking("sandbox")).toEqual(["local"]);
    expect(BACKENDS.filter((name) => sharesHostFiles({ backend: name }))).toEqual(["local"]);
    expect(sharesHostFiles({})).toBe(true);
    expect(requiredOptionExample("docker", "image")).toBe("debian:bookworm");
    expect(requiredOptionExample("docker", "constructor")).toBeUndefined();
    expect(requiredOptionExample("__proto__", "image")).toBeUndefined();
  });
});
