/** examples/matrix.json (the spec's backend x tool matrix) on every backend of the compat suite. */

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parsePlan, playPlan } from "../../src/cli/plan.js";
import { compatBackends } from "../compat/backends.js";
import { remoteStyleBackend } from "./remote-style.js";

const plan = parsePlan(JSON.parse(readFileSync(new URL("../../examples/matrix.json", import.meta.url), "utf8")));

for (const backend of [...compatBackends, remoteStyleBackend]) {
  describe.skipIf(!backend.enabled)(`matrix: ${backend.name}`, () => {
    it("plays every step and every result matches", async () => {
      const session = await backend.create();
      try {
        const reports = await playPlan(session, plan.steps, { check: true });
        for (const report of reports) {
          if (report.skipped !== undefined) continue;
          expect(report.mismatches, `step ${report.step}`).toBeUndefined();
          expect(JSON.stringify(report.result)).not.toContain("__SHELLWRIGHT_");
        }
        expect(reports.filter((r) => r.check === "pass").length).toBe(
          plan.steps.filter((s) => s.expect && !s.skip).length,
        );
      } finally {
        await session.close();
      }
    });
  });
}
