/**
 * The V4A diffs of OpenAI's apply_patch as OpenAI documents them: the one-file
 * diffs an `apply_patch_call` carries (the V4A examples published with the
 * OpenAI Agents SDK's applyDiff, and its stacked-anchor and line-number
 * cases), and the envelope of Codex's apply_patch instructions. Each is
 * applied by Shellwright's own parser and applier and must give what OpenAI
 * says it gives.
 */

import { describe, expect, it } from "vitest";
import { applyHunks, parseCreateDiff, parseUpdateDiff, parseV4a } from "../../../src/tools/patch/v4a.js";

const lines = (...text: string[]): string => text.join("\n");
/** A Python script's lines after its imports (case 4 inserts an import above them). */
const PY_MAIN = ["", "def main():", '    print("Running app")', "", 'if __name__ == "__main__":', "    main()"];

/** Two classes with a method of one name; the subclass's method body is `last`. */
const twoClasses = (last: string): string =>
  lines("class BaseClass", "    def search():", "        pass", "", "class Subclass", "    def search():", last) + "\n";

function update(input: string, diff: string): string {
  const applied = applyHunks(input, parseUpdateDiff(diff), "file");
  if (!applied.ok) throw new Error(applied.error);
  return applied.text;
}

describe("OpenAI's documented V4A update diffs", () => {
  const cases: { name: string; input: string; diff: string; expected: string }[] = [
    {
      name: "1: a replacement with no @@ and no context",
      input: lines("Hello, world!", "This is my project."),
      diff: lines("-Hello, world!", "+Hello, V4A diff format!"),
      expected: lines("Hello, V4A diff format!", "This is my project."),
    },
    {
      name: "2: a whole function replaced",
      input: lines(
        "def greet(name):",
        '    return "Hello " + name',
        "",
        'if __name__ == "__main__":',
        '    print(greet("Alice"))',
      ),
      diff: lines(
        "-def greet(name):",
        '-    return "Hello " + name',
        "+def greet(name: str) -> str:",
        '+    return f"Hello, {name}!"',
      ),
      expected: lines(
        "def greet(name: str) -> str:",
        '    return f"Hello, {name}!"',
        "",
        'if __name__ == "__main__":',
        '    print(greet("Alice"))',
      ),
    },
    {
      name: "3: a value toggled between context lines",
      input: lines("env: dev", "debug: false", "log_level: info"),
      diff: lines(" env: dev", "-debug: false", "+debug: true", " log_level: info"),
      expected: lines("env: dev", "debug: true", "log_level: info"),
    },
    {
      name: "4: a pure insertion, with empty context lines written as empty lines",
      input: lines("import os", ...PY_MAIN),
      diff: lines(
        " import os",
        "+import sys",
        "",
        " def main():",
        '     print("Running app")',
        "",
        ' if __name__ == "__main__":',
        "     main()",
      ),
      expected: lines("import os", "import sys", ...PY_MAIN),
    },
    {
      name: "5: a line removed",
      input: lines("def handle_request(req):", '    print("DEBUG: got request", req)', '    return {"status": "ok"}'),
      diff: lines(" def handle_request(req):", '-    print("DEBUG: got request", req)', '     return {"status": "ok"}'),
      expected: lines("def handle_request(req):", '    return {"status": "ok"}'),
    },
    {
      name: "6: a bare @@",
      input: lines("def add(a, b):", "    return a + b", "", "def mul(a, b):", "    return a * b"),
      diff: lines(
        "@@",
        "-def add(a, b):",
        "-    return a + b",
        "+def add(a: int, b: int) -> int:",
        '+    """Add two integers."""',
        "+    return a + b",
      ),
      expected: lines(
        "def add(a: int, b: int) -> int:",
        '    """Add two integers."""',
        "    return a + b",
        "",
        "def mul(a, b):",
        "    return a * b",
      ),
    },
    {
      name: "7: @@ naming the class",
      input: lines(
        "class UserRepository:",
        "    def get_user(self, user_id):",
        "        raise NotImplementedError",
        "",
        "    def save_user(self, user):",
        "        raise NotImplementedError",
      ),
      diff: lines(
        "@@ class UserRepository:",
        "     def get_user(self, user_id):",
        "-        raise NotImplementedError",
        '+        """Fetch a user by ID or return None."""',
        "+        return self._db.get(user_id)",
      ),
      expected: lines(
        "class UserRepository:",
        "    def get_user(self, user_id):",
        '        """Fetch a user by ID or return None."""',
        "        return self._db.get(user_id)",
        "",
        "    def save_user(self, user):",
        "        raise NotImplementedError",
      ),
    },
    {
      name: "8: a constant changed",
      input: lines('API_URL = "https://api.example.com"', "TIMEOUT_SECONDS = 5", "RETRIES = 1"),
      diff: lines(
        ' API_URL = "https://api.example.com"',
        "-TIMEOUT_SECONDS = 5",
        "+TIMEOUT_SECONDS = 10",
        " RETRIES = 1",
      ),
      expected: lines('API_URL = "https://api.example.com"', "TIMEOUT_SECONDS = 10", "RETRIES = 1"),
    },
    {
      name: "11: a context line of one space stands for an empty line",
      input: lines("from app import run", "", 'if __name__ == "__main__":', "    run()"),
      diff: lines("-from app import run", "+from app import run", " ", ' if __name__ == "__main__":', "     run()"),
      expected: lines("from app import run", "", 'if __name__ == "__main__":', "    run()"),
    },
    {
      name: "16: a test inserted in the middle",
      input: lines("def test_add():", "    assert add(1, 2) == 3", "", "def test_mul():", "    assert mul(2, 3) == 6"),
      diff: lines(
        " def test_add():",
        "     assert add(1, 2) == 3",
        "",
        "+def test_sub():",
        "+    assert sub(5, 2) == 3",
        "+",
        " def test_mul():",
        "     assert mul(2, 3) == 6",
      ),
      expected: lines(
        "def test_add():",
        "    assert add(1, 2) == 3",
        "",
        "def test_sub():",
        "    assert sub(5, 2) == 3",
        "",
        "def test_mul():",
        "    assert mul(2, 3) == 6",
      ),
    },
    {
      name: "17: the last lines of a file",
      input: lines("Line A", "Line B", "Line C"),
      diff: lines(" Line A", "-Line B", "-Line C", "+Line B (updated)", "+Line C (updated)"),
      expected: lines("Line A", "Line B (updated)", "Line C (updated)"),
    },
    {
      name: "18: a heading and the empty line after it",
      input: lines("# Getting Started", "", "This is the old intro text.", "", "## Installation", "", "Steps go here."),
      diff: lines(
        "-# Getting Started",
        "-",
        "-This is the old intro text.",
        "+# Quick Start Guide",
        "+",
        "+This is the updated introduction, with clearer instructions.",
        "",
        " ## Installation",
      ),
      expected: lines(
        "# Quick Start Guide",
        "",
        "This is the updated introduction, with clearer instructions.",
        "",
        "## Installation",
        "",
        "Steps go here.",
      ),
    },
    {
      name: "19: a JSON field",
      input: lines("{", '  "name": "demo",', '  "enabled": false,', '  "retries": 3', "}"),
      diff: lines(" {", '   "name": "demo",', '-  "enabled": false,', '+  "enabled": true,', '   "retries": 3', " }"),
      expected: lines("{", '  "name": "demo",', '  "enabled": true,', '  "retries": 3', "}"),
    },
    {
      name: "20: two changes in one section, context between them",
      input: lines(
        "function add(a, b) {",
        "  return a + b;",
        "}",
        "",
        "function greet(name) {",
        '  return "Hello " + name;',
        "}",
      ),
      diff: lines(
        "@@",
        "-function add(a, b) {",
        "-  return a + b;",
        "-}",
        "+function add(a, b) {",
        "+  return a + b; // simple add",
        "+}",
        " ",
        " function greet(name) {",
        '-  return "Hello " + name;',
        "-}",
        "+  return `Hello ${name}!`;",
        "+}",
      ),
      expected: lines(
        "function add(a, b) {",
        "  return a + b; // simple add",
        "}",
        "",
        "function greet(name) {",
        "  return `Hello ${name}!`;",
        "}",
      ),
    },
    {
      name: "two sections, each found after its @@ line",
      input:
        lines(
          "class Foo:",
          "    def baz(self):",
          '        return f"foo {randint()}"',
          "",
          "def main():",
          "    foo = Foo()",
          "    print(foo.baz())",
        ) + "\n",
      diff: lines(
        "@@ class Foo:",
        "-    def baz(self):",
        "+    def rand(self):",
        '        return f"foo {randint()}"',
        "@@ def main():",
        "     foo = Foo()",
        "-    print(foo.baz())",
        "+    print(foo.rand())",
      ),
      expected:
        lines(
          "class Foo:",
          "    def rand(self):",
          '        return f"foo {randint()}"',
          "",
          "def main():",
          "    foo = Foo()",
          "    print(foo.rand())",
        ) + "\n",
    },
    {
      name: "stacked @@ lines narrow down to the method of the right class",
      input: twoClasses("        pass"),
      diff: lines("@@ class Subclass", "@@     def search():", "-        pass", "+        raise NotImplementedError()"),
      expected: twoClasses("        raise NotImplementedError()"),
    },
    {
      name: "a unified diff's line numbers after @@ are no anchor",
      input: "one\ntwo\n",
      diff: lines("@@ -1,2 +1,2 @@", " one", "-two", "+2"),
      expected: "one\n2\n",
    },
    {
      name: "CRLF in the diff reads as LF",
      input: "a\nb\n",
      diff: "@@\r\n-b\r\n+B\r\n",
      expected: "a\nB\n",
    },
  ];

  for (const { name, input, diff, expected } of cases) {
    it(`example ${name}`, () => {
      expect(update(input, diff)).toBe(expected);
    });
  }

  it("says which hunk did not apply, and which @@ line it looked for", () => {
    const input = lines("class Target", "    def helper():", "        pass") + "\n";
    expect(
      applyHunks(
        input,
        parseUpdateDiff(lines("@@ class Target", "@@     def missing():", "-        pass", "+        return 1")),
        "t.py",
      ),
    ).toEqual({
      ok: false,
      error: 't.py: hunk 2 (@@ def missing():): could not find the @@ line "def missing():"',
    });
    const context = applyHunks("one\ntwo\n", parseUpdateDiff(lines("@@", "-one", "+1", "@@", " x", "-two", "+2")), "f");
    expect(context).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^f: hunk 2: could not find the lines to change:\nx\ntwo\n/),
    });
  });

  it("refuses a diff that changes nothing, or holds another file's header", () => {
    expect(() => parseUpdateDiff(" Legacy content")).toThrow("the diff has no changes");
    expect(() => parseUpdateDiff(lines("@@", "-a", "+b", "*** Update File: other.txt", "-c"))).toThrow(
      /^line 4: "\*\*\* Update File: other\.txt" cannot appear in the diff of one file/,
    );
    expect(parseUpdateDiff(lines("@@", " last", "+appended", "*** End of File"))[0]).toMatchObject({ atEnd: true });
  });
});

describe("OpenAI's documented V4A create diffs", () => {
  it("example 9: every line starts with +; the lines are joined by newlines", () => {
    expect(
      parseCreateDiff(lines("+Welcome to the project!", "+This documentation will guide you through setup.")),
    ).toBe(lines("Welcome to the project!", "This documentation will guide you through setup."));
  });

  it("examples 10 and 12: a + alone is an empty line, and a last one gives the final newline", () => {
    expect(parseCreateDiff(lines("+MIT License", "+", "+Copyright (c) 2025"))).toBe(
      "MIT License\n\nCopyright (c) 2025",
    );
    expect(parseCreateDiff(lines("+def run():", '+    print("Hello from app.run()")', "+"))).toBe(
      'def run():\n    print("Hello from app.run()")\n',
    );
    expect(parseCreateDiff("+hello\n+world\n")).toBe("hello\nworld");
  });

  it("refuses a line without +, naming it", () => {
    expect(() => parseCreateDiff("line1\nline2")).toThrow(
      'line 1: every line of a create_file diff starts with + (got "line1")',
    );
  });
});

describe("the envelope of Codex's apply_patch instructions", () => {
  it("reads the example that adds, updates and moves, and deletes", () => {
    const ops = parseV4a(
      lines(
        "*** Begin Patch",
        "*** Add File: hello.txt",
        "+Hello world",
        "*** Update File: src/app.py",
        "*** Move to: src/main.py",
        "@@ def greet():",
        '-print("Hi")',
        '+print("Hello, world!")',
        "*** Delete File: obsolete.txt",
        "*** End Patch",
      ),
    );
    expect(ops.map((op) => [op.kind, op.path])).toEqual([
      ["add", "hello.txt"],
      ["update", "src/app.py"],
      ["delete", "obsolete.txt"],
    ]);
    expect(ops[1]).toMatchObject({ moveTo: "src/main.py", hunks: [{ anchor: "def greet():" }] });
    const greet = applyHunks(
      'def greet():\nprint("Hi")\n',
      ops[1]!.kind === "update" ? ops[1]!.hunks : [],
      "src/app.py",
    );
    expect(greet).toEqual({ ok: true, text: 'def greet():\nprint("Hello, world!")\n' });
  });
});
