/** `--sandbox` on the command line: the preset on the local backend, refused on the others. */

import { afterAll, describe, expect, it } from "vitest";
import { cli, cliHome } from "../../../helpers/cli.js";
import { HAVE_BWRAP, makeWorld, read, SKIP_REASON } from "./fixture.js";

describe("shellwright exec --sandbox", () => {
  const where = cliHome();
  const world = makeWorld();
  afterAll(() => {
    where.remove();
    world.cleanup();
  });

  it.skipIf(!HAVE_BWRAP)(`runs the command in the preset sandbox (${HAVE_BWRAP ? "bwrap" : SKIP_REASON})`, () => {
    const result = cli(where, ["exec", "--sandbox", "--", "echo in > here; echo out > ../outside/x; cat here"], {
      cwd: world.work,
    });
    expect(result.stdout).toContain("in\n");
    expect(result.stdout).toMatch(/Read-only file system/);
    expect(read(`${world.outside}/x`)).toBeUndefined();
  });

  it("is refused on another backend", () => {
    const result = cli(where, ["exec", "--backend", "docker", "--sandbox", "true"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--sandbox is for the local backend/);
  });
});
