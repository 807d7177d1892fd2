/** Exit codes that are not errors: the one-line meaning the terminal tool adds. */

import { describe, expect, it } from "vitest";
import { exitCodeMeaning } from "../../../src/tools/terminal/exit-codes.js";

describe("exitCodeMeaning", () => {
  it.each([
    ["grep foo file", 1, "No matches found (not an error)"],
    ["cat x | rg foo", 1, "No matches found (not an error)"],
    ["LANG=C /usr/bin/grep -r x .", 1, "No matches found (not an error)"],
    ["make && diff a b", 1, "Files differ (expected, not an error)"],
    ["find / -name x", 1, "Some directories were inaccessible (partial results may still be valid)"],
    ["[ -f x ]", 1, "Condition evaluated to false (expected, not an error)"],
    ["curl -f http://x", 22, "HTTP response code indicated error (e.g. 404, 500)"],
    ["git diff --quiet", 1, "Non-zero exit (often normal — e.g. 'git diff' returns 1 when files differ)"],
  ])("%s exit %i", (command, code, meaning) => {
    expect(exitCodeMeaning(command, code)).toBe(meaning);
  });

  it("says nothing for success, real errors and unknown commands", () => {
    expect(exitCodeMeaning("grep x y", 0)).toBeUndefined();
    expect(exitCodeMeaning("grep x y", 2)).toBeUndefined();
    expect(exitCodeMeaning("grep x y; false", 1)).toBeUndefined();
    expect(exitCodeMeaning("mytool", 1)).toBeUndefined();
  });
});
