/**
 * The file-tool steps of the matrix plan (examples/matrix-files.json), played
 * on every backend with a minimal player (the plan runner of part 1 plays the
 * merged examples/matrix.json the same way).
 */

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fileTools } from "../../src/tools/file-tools.js";
import { toolBackends, useToolFixture } from "./fixture.js";

interface Step {
  name: string;
  tool: string;
  args: Record<string, unknown>;
  expect: Record<string, unknown>;
}

const steps = JSON.parse(readFileSync(new URL("../../examples/matrix-files.json", import.meta.url), "utf8")) as Step[];

function check(expected: unknown, actual: unknown): void {
  if (typeof expected === "object" && expected !== null && !Array.isArray(expected)) {
    const matcher = expected as Record<string, unknown>;
    if ("$absent" in matcher) return expect(actual).toBeUndefined();
    if ("$contains" in matcher) return expect(actual).toContain(matcher.$contains);
    for (const [key, value] of Object.entries(matcher)) check(value, (actual as Record<string, unknown>)[key]);
    return;
  }
  expect(actual).toEqual(expected);
}

for (const backend of toolBackends) {
  describe.skipIf(!backend.enabled)(`matrix file steps on ${backend.name}`, () => {
    const t = useToolFixture(backend.create);
    it("plays write, read, search, patch, read back", async () => {
      // In the scratch dir, not /tmp/shellwright-matrix: the full matrix test may be using that one right now.
      const here = (value: unknown): unknown => JSON.parse(JSON.stringify(value).replaceAll("/tmp/shellwright-matrix", `${t.scratch}/matrix`));
      await t.sh(`mkdir -p ${t.scratch}/matrix`);
      for (const step of steps) {
        const tool = fileTools.find((candidate) => candidate.name === step.tool)!;
        const result = await t.call(tool, here(step.args));
        check(here(step.expect), result);
      }
    });
  });
}
