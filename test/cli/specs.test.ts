/**
 * src/cli/specs.ts words the backends in plain text, so that `--help` loads none of them: this keeps those words
 * in step with the table of backends (src/backends/index.ts) as backends are added.
 */

import { describe, expect, it } from "vitest";
import { BACKENDS, backendsTaking } from "../../src/backends/index.js";
import { exec } from "../../src/cli/specs.js";

/** The names a help text lists, e.g. "local, docker or gateway (default local)" gives local, docker, gateway. */
function namesIn(help: string): string[] {
  return help.match(/[a-z][a-z0-9-]*/g) ?? [];
}

describe("the CLI's words for the backends", () => {
  it("--backend names every backend of the table", () => {
    const help = exec.options.backend!.help;
    expect(namesIn(help)).toEqual(expect.arrayContaining([...BACKENDS]));
  });

  it("--image names every backend that takes an image", () => {
    const help = exec.options.image!.help;
    expect(backendsTaking("image").length).toBeGreaterThan(0);
    expect(namesIn(help)).toEqual(expect.arrayContaining(backendsTaking("image")));
  });
});
