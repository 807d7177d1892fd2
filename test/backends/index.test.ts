/** createEnvironment's own checks (src/backends/index.ts), before a backend opens anything. */

import { describe, expect, it } from "vitest";
import { createEnvironment, InvalidOptionError } from "../../src/index.js";

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
