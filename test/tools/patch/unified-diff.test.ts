import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { unifiedDiff } from "../../../src/tools/patch/unified-diff.js";

/** GNU patch is the reference applier; a fresh machine may not have it. */
function hasPatch(): boolean {
  try {
    execFileSync("patch", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("unifiedDiff", () => {
  it("writes a/ b/ headers and a hunk with three lines of context", () => {
    const before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    const after = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
    expect(unifiedDiff(before, after, "f.txt")).toBe(
      "--- a/f.txt\n+++ b/f.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n",
    );
  });

  it("names an absolute path a/tmp/x and b/tmp/x, as git does, never a//tmp/x", () => {
    const diff = unifiedDiff("one\n", "two\n", "/tmp/x.txt");
    expect(diff.split("\n").slice(0, 2)).toEqual(["--- a/tmp/x.txt", "+++ b/tmp/x.txt"]);
    expect(unifiedDiff("one\n", "two\n", "src/x.ts").split("\n")[0]).toBe("--- a/src/x.ts");
  });

  it("is empty for equal texts and handles a change in a 10 000-line file", () => {
    expect(unifiedDiff("a\n", "a\n", "x")).toBe("");
    const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i}`);
    const changed = [...lines];
    changed[7777] = "changed";
    const diff = unifiedDiff(`${lines.join("\n")}\n`, `${changed.join("\n")}\n`, "big");
    expect(diff).toContain("@@ -7775,7 +7775,7 @@");
    expect(diff).toContain("-line 7777\n+changed\n");
  });

  it("applies with patch(1) to give the new text, for random edits", (context) => {
    if (!hasPatch()) context.skip("patch(1) is not installed here (apt-get install patch)");
    const dir = mkdtempSync(join(tmpdir(), "sw-diff-"));
    const line = fc.constantFrom("a", "b", "c", "d", "");
    const eol = fc.boolean();
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 30 }),
        fc.array(line, { maxLength: 30 }),
        eol,
        eol,
        (x, y, eolX, eolY) => {
          const before = x.join("\n") + (eolX && x.length > 0 ? "\n" : "");
          const after = y.join("\n") + (eolY && y.length > 0 ? "\n" : "");
          const diff = unifiedDiff(before, after, "f");
          if (before === after) return diff === "";
          writeFileSync(join(dir, "f"), before);
          writeFileSync(join(dir, "d.patch"), diff);
          execFileSync("patch", ["-s", "-p1", "-i", "d.patch"], { cwd: dir });
          return execFileSync("cat", ["f"], { cwd: dir, encoding: "utf8" }) === after;
        },
      ),
      { numRuns: 150 },
    );
  });
});
