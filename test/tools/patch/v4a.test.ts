import { describe, expect, it } from "vitest";
import { applyHunks, parseV4a } from "../../../src/tools/patch/v4a.js";

describe("V4A parsing", () => {
  it("reads update, add, delete and both move forms", () => {
    const ops = parseV4a(
      [
        "*** Begin Patch",
        "*** Update File: src/a.py",
        "*** Move to: src/b.py",
        "@@ def main():",
        " x = 1",
        "-y = 2",
        "+y = 3",
        "*** Add File: new.txt",
        "+hello",
        "+world",
        "*** Delete File: old.txt",
        "*** Move File: from.txt -> to/there.txt",
        "*** End Patch",
      ].join("\n"),
    );
    expect(ops).toEqual([
      {
        kind: "update",
        path: "src/a.py",
        moveTo: "src/b.py",
        hunks: [
          {
            anchor: "def main():",
            atEnd: false,
            lines: [
              { kind: " ", text: "x = 1" },
              { kind: "-", text: "y = 2" },
              { kind: "+", text: "y = 3" },
            ],
          },
        ],
      },
      { kind: "add", path: "new.txt", content: "hello\nworld\n" },
      { kind: "delete", path: "old.txt" },
      { kind: "move", path: "from.txt", moveTo: "to/there.txt" },
    ]);
  });

  it("tolerates a missing Begin marker and unprefixed context lines", () => {
    expect(parseV4a("*** Update File: f\n@@\nkeep\n-old\n+new\n")).toEqual([
      {
        kind: "update",
        path: "f",
        hunks: [
          {
            anchor: "",
            atEnd: false,
            lines: [
              { kind: " ", text: "keep" },
              { kind: "-", text: "old" },
              { kind: "+", text: "new" },
            ],
          },
        ],
      },
    ]);
  });

  it("rejects malformed patches with the line that is wrong", () => {
    expect(() => parseV4a("*** Begin Patch\n*** End Patch")).toThrow(/no operations/);
    expect(() => parseV4a("*** Begin Patch\nrandom text\n*** End Patch")).toThrow(
      /line 2: expected \*\*\* Update File/,
    );
    expect(() => parseV4a("*** Add File: x\nno plus\n")).toThrow(
      /line 2: every line of an \*\*\* Add File section starts with \+/,
    );
    expect(() => parseV4a("*** Update File: x\n@@\n same\n")).toThrow(/has no changes/);
  });
});

describe("V4A hunks", () => {
  const file = "def a():\n    return 1\n\ndef b():\n    return 1\n";

  it("uses the @@ anchor to pick the right one of two equal blocks", () => {
    const [op] = parseV4a("*** Update File: f\n@@ def b():\n-    return 1\n+    return 2\n");
    expect(applyHunks(file, op!.kind === "update" ? op!.hunks : [], "f")).toEqual({
      ok: true,
      text: "def a():\n    return 1\n\ndef b():\n    return 2\n",
    });
  });

  it("applies hunks in order and inserts pure additions after their anchor or at the end", () => {
    const [op] = parseV4a("*** Update File: f\n@@ def a():\n+    # first\n@@\n+# tail\n");
    expect(applyHunks(file, op!.kind === "update" ? op!.hunks : [], "f")).toEqual({
      ok: true,
      text: "def a():\n    # first\n    return 1\n\ndef b():\n    return 1\n# tail\n",
    });
  });

  it("keeps a missing final newline and matches whole lines only", () => {
    const [op] = parseV4a("*** Update File: f\n@@\n-two\n+2\n");
    const hunks = op!.kind === "update" ? op!.hunks : [];
    expect(applyHunks("one\ntwo", hunks, "f")).toEqual({ ok: true, text: "one\n2" });
    expect(applyHunks("one\nnetwork\n", hunks, "f")).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^f: hunk 1: could not find the lines to change/),
    });
  });

  it("finds a hunk whose context drifted in whitespace, and leaves the context lines as the file has them", () => {
    const [op] = parseV4a("*** Update File: f\n@@\n def a():\n-  return 1\n+  return 7\n");
    const out = applyHunks("def a():   \n  return 1\n", op!.kind === "update" ? op!.hunks : [], "f");
    expect(out).toEqual({ ok: true, text: "def a():   \n  return 7\n" });
  });
});
