/** The closing lines of a test run that say where its time went. */

import { describe, expect, it } from "vitest";
import { timeSummary } from "./time-summary.js";

describe("timeSummary", () => {
  it("adds up seconds per top-level folder, most first, and files at the top under their own heading", () => {
    const [folders] = timeSummary([
      { path: "tools/files/write-file.test.ts", seconds: 200.4, suites: [] },
      { path: "tools/matrix.test.ts", seconds: 100.2, suites: [] },
      { path: "core/session.test.ts", seconds: 40, suites: [] },
      { path: "package.test.ts", seconds: 18, suites: [] },
      { path: "compat/sdk.test.ts", seconds: 500, suites: [] },
    ]);
    expect(folders).toBe("Seconds per folder of test/: compat 500, tools 301, core 40, (top-level files) 18");
  });

  it("adds up seconds per compat entry from the compat files' `<what>: <entry>` blocks only", () => {
    const lines = timeSummary([
      {
        path: "compat/compat.test.ts",
        seconds: 90,
        suites: [
          { name: "compat: docker-plain", seconds: 60 },
          { name: "compat: local", seconds: 30 },
        ],
      },
      { path: "compat/pool.test.ts", seconds: 12, suites: [{ name: "pool compat: local", seconds: 12 }] },
      { path: "tools/matrix.test.ts", seconds: 50, suites: [{ name: "matrix: docker-plain", seconds: 50 }] },
    ]);
    expect(lines[1]).toBe("Seconds per compat entry (test/compat/): docker-plain 60, local 42");
  });

  it("leaves the compat line out when no compat file ran", () => {
    expect(timeSummary([{ path: "core/a.test.ts", seconds: 1, suites: [{ name: "x: y", seconds: 1 }] }])).toHaveLength(
      1,
    );
  });
});
