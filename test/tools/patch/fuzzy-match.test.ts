import { describe, expect, it } from "vitest";
import { fuzzyReplace, STRATEGY_NAMES } from "../../../src/tools/patch/fuzzy-match.js";

// Real-world near misses: what models send when their copy of the file drifted.
const table: Array<{
  name: string;
  file: string;
  old: string;
  replacement: string;
  expected: string;
  strategy: string;
}> = [
  {
    name: "exact text",
    file: "a = 1\nb = 2\n",
    old: "b = 2",
    replacement: "b = 3",
    expected: "a = 1\nb = 3\n",
    strategy: "exact",
  },
  {
    name: "trailing spaces in the file the model did not see",
    file: "def f():   \n    return 1\n",
    old: "def f():\n    return 1",
    replacement: "def f():\n    return 2",
    expected: "def f():\n    return 2\n",
    strategy: "line_trimmed",
  },
  {
    name: "a tab in the file, spaces in old_string, inside a line",
    file: "x = call(a,\tb)\n",
    old: "call(a, b)",
    replacement: "call(a, c)",
    expected: "x = call(a, c)\n",
    strategy: "whitespace_normalized",
  },
  {
    name: "double spaces collapsed by the model inside a line",
    file: "if  (x  ==  1) { go(); }\n",
    old: "(x == 1) { go(); }",
    replacement: "(x == 2) { go(); }",
    expected: "if  (x == 2) { go(); }\n",
    strategy: "whitespace_normalized",
  },
  {
    name: "escaped newlines sent literally",
    file: "first\nsecond\n",
    old: "first\\nsecond",
    replacement: "first\\nthird",
    expected: "first\nthird\n",
    strategy: "escape_normalized",
  },
  {
    name: "blank lines around old_string",
    file: "start\nmiddle\nend\n",
    old: "\n\nmiddle\n\n",
    replacement: "centre",
    expected: "start\ncentre\nend\n",
    strategy: "trimmed_boundary",
  },
  {
    name: "smart quotes and an em dash from a chat UI",
    file: 'msg = "it\'s done" # ok - yes\n',
    old: "msg = \u201Cit\u2019s done\u201D # ok \u2014 yes",
    replacement: 'msg = "finished"',
    expected: 'msg = "finished"\n',
    strategy: "unicode_normalized",
  },
  {
    name: "first and last lines right, a middle line misremembered",
    file: "function go() {\n  const a = load();\n  const b = transform(a, 3);\n  return b;\n}\n",
    old: "function go() {\n  const a = load();\n  const b = transform(a, 2);\n  return b;\n}",
    replacement: "function go() {\n  return 0;\n}",
    expected: "function go() {\n  return 0;\n}\n",
    strategy: "block_anchor",
  },
  {
    name: "a comment line changed, most lines close",
    file: "x = 1\n# compute the value\ny = x + 1\n",
    old: "x = 1\n# compute value\ny = x + 2",
    replacement: "x = 2",
    expected: "x = 2\n",
    strategy: "context_aware",
  },
];

describe("the fuzzy strategy chain", () => {
  it("has nine strategies in order, strict to loose", () => {
    expect(STRATEGY_NAMES).toEqual([
      "exact",
      "line_trimmed",
      "whitespace_normalized",
      "indentation_flexible",
      "escape_normalized",
      "trimmed_boundary",
      "unicode_normalized",
      "block_anchor",
      "context_aware",
    ]);
  });

  for (const row of table) {
    it(`finds ${row.name} with ${row.strategy}`, () => {
      const outcome = fuzzyReplace(row.file, row.old, row.replacement, false);
      expect(outcome).toEqual({ ok: true, content: row.expected, count: 1, strategy: row.strategy });
    });
  }

  it("re-indents new_string written at the model's indentation to the file's", () => {
    const file = "class A:\n    def f(self):\n        return 1\n";
    const outcome = fuzzyReplace(file, "def f(self):\n    return 1", "def f(self):\n    return 3", false);
    expect(outcome).toEqual({
      ok: true,
      content: "class A:\n    def f(self):\n        return 3\n",
      count: 1,
      strategy: "indentation_flexible",
    });
  });

  it("matches code indented differently (indentation_flexible) without touching other lines", () => {
    const file = "class A:\n        def f(self):\n            return 1\n    x = 2\n";
    const outcome = fuzzyReplace(
      file,
      "def f(self):\n    return 1",
      "        def f(self):\n            return 3",
      false,
    );
    expect(outcome).toMatchObject({ ok: true, strategy: "indentation_flexible" });
    if (outcome.ok) expect(outcome.content).toBe("class A:\n        def f(self):\n            return 3\n    x = 2\n");
  });

  it("refuses an ambiguous match and replaces all when asked", () => {
    const file = "log(1)\nlog(1)\nlog(2)\n";
    expect(fuzzyReplace(file, "log(1)", "log(9)", false)).toEqual({
      ok: false,
      error: "Found 2 matches for old_string. Provide more context to make it unique, or use replace_all=true.",
    });
    expect(fuzzyReplace(file, "log(1)", "log(9)", true)).toEqual({
      ok: true,
      content: "log(9)\nlog(9)\nlog(2)\n",
      count: 2,
      strategy: "exact",
    });
  });

  it("refuses an ambiguous fuzzy match too", () => {
    const file = "  call()  \nother\n\tcall() \n";
    expect(fuzzyReplace(file, "call()\n", "x()\n", false)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^Found 2 matches/),
    });
  });

  it("prefers an exact match over a fuzzy one elsewhere", () => {
    const file = "value = 1\nvalue  =  1\n";
    expect(fuzzyReplace(file, "value  =  1", "v = 2", false)).toEqual({
      ok: true,
      content: "value = 1\nv = 2\n",
      count: 1,
      strategy: "exact",
    });
  });

  it("gives the spec's errors for empty, identical and missing strings", () => {
    expect(fuzzyReplace("abc", "", "x", false)).toEqual({ ok: false, error: "old_string cannot be empty" });
    expect(fuzzyReplace("abc", "b", "b", false)).toEqual({
      ok: false,
      error: "old_string and new_string are identical",
    });
    expect(fuzzyReplace("abc\n", "nothing like it at all", "x", false)).toEqual({
      ok: false,
      error: "Could not find a match for old_string in the file",
    });
  });
});
