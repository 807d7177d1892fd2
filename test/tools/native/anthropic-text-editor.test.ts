/**
 * Anthropic's text editor tool on a local session, with the result and
 * error texts Anthropic's documentation gives: view (a file as "N: line", a
 * view_range, a directory), create, str_replace and insert, and each refusal
 * leaving the file as it was.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../../src/index.js";
import { anthropicTextEditorTool, createTextEditorTool } from "../../../src/tools/native/anthropic-text-editor.js";
import { callTool } from "../../../src/tools/registry.js";
import type { ToolDefinition, ToolResult } from "../../../src/tools/shared/tool-definition.js";

const PRIMES = [
  "def is_prime(n):",
  '    """Check if a number is prime."""',
  "    if n <= 1:",
  "        return False",
  "",
  "def get_primes(limit):",
  "    primes = []",
  "    for num in range(2, limit + 1)",
  "        if is_prime(num):",
  "            primes.append(num)",
  "    return primes",
].join("\n");

describe("str_replace_based_edit_tool (Anthropic)", () => {
  let session: Environment;
  let dir: string;
  const edit = (args: unknown, tool: ToolDefinition = anthropicTextEditorTool as ToolDefinition): Promise<ToolResult> =>
    callTool(tool, args, { session });
  const cat = async (name: string) => (await session.execute(`cat ${dir}/${name}`)).output;

  beforeAll(async () => {
    session = await createEnvironment({ backend: "local", cwd: "/tmp" });
    dir = (await session.execute("mktemp -d")).output.trim();
    await session.execute(`cd ${dir} && cat > primes.py`, { stdin: `${PRIMES}\n` });
  });
  afterAll(async () => {
    await session.execute(`rm -rf ${dir}`);
    await session.close();
  });

  it("views a file as numbered lines, as the documentation's example shows", async () => {
    const { content } = await edit({ command: "view", path: "primes.py" });
    expect(content).toBe(
      PRIMES.split("\n")
        .map((line, i) => `${i + 1}: ${line}`)
        .join("\n"),
    );
    expect(await edit({ command: "view", path: "primes.py", view_range: [8, 9] })).toEqual({
      content: "8:     for num in range(2, limit + 1)\n9:         if is_prime(num):",
    });
    expect(await edit({ command: "view", path: "primes.py", view_range: [10, -1] })).toEqual({
      content: "10:             primes.append(num)\n11:     return primes",
    });
    // A last line past the end shows to the end.
    expect(await edit({ command: "view", path: "primes.py", view_range: [11, 99] })).toEqual({
      content: "11:     return primes",
    });
  });

  it("fixes the documentation's syntax error with str_replace, with its texts", async () => {
    expect(
      await edit({
        command: "str_replace",
        path: "primes.py",
        old_str: "    for num in range(2, limit + 1)",
        new_str: "    for num in range(2, limit + 1):",
      }),
    ).toEqual({ content: "Successfully replaced text at exactly one location." });
    expect(await cat("primes.py")).toContain("    for num in range(2, limit + 1):\n");
    expect(await edit({ command: "str_replace", path: "primes.py", old_str: "no such text", new_str: "x" })).toEqual({
      error: "Error: No match found for replacement. Please check your text and try again.",
    });
    expect(await edit({ command: "str_replace", path: "primes.py", old_str: "return", new_str: "yield" })).toEqual({
      error: "Error: Found 2 matches for replacement text. Please provide more context to make a unique match.",
    });
    expect(await edit({ command: "str_replace", path: "absent.py", old_str: "a", new_str: "b" })).toEqual({
      error: "Error: File not found",
    });
  });

  it("creates a new file, and will not overwrite one", async () => {
    const text = "import unittest\nimport primes\n";
    expect(await edit({ command: "create", path: "tests/test_primes.py", file_text: text })).toEqual({
      content: "File created successfully at: tests/test_primes.py",
    });
    expect(await cat("tests/test_primes.py")).toBe(text);
    expect(await edit({ command: "create", path: "tests/test_primes.py", file_text: "other" })).toEqual({
      error: "Error: File already exists at: tests/test_primes.py. Cannot overwrite files using command `create`.",
    });
    expect(await cat("tests/test_primes.py")).toBe(text);
  });

  it("inserts after a line, 0 being the start, and refuses a line past the end", async () => {
    await session.execute(`printf 'a\\nb\\n' > ${dir}/ins.txt; printf 'x' > ${dir}/nofinal.txt`);
    expect(await edit({ command: "insert", path: "ins.txt", insert_line: 0, new_str: '"""doc"""\n' })).toEqual({
      content: "Successfully inserted text after line 0.",
    });
    expect(await edit({ command: "insert", path: "ins.txt", insert_line: 3, new_str: "end" })).toMatchObject({
      content: expect.any(String),
    });
    expect(await cat("ins.txt")).toBe('"""doc"""\na\nb\nend\n');
    expect(await edit({ command: "insert", path: "nofinal.txt", insert_line: 1, new_str: "y" })).toMatchObject({
      content: expect.any(String),
    });
    expect(await cat("nofinal.txt")).toBe("x\ny");
    expect(await edit({ command: "insert", path: "ins.txt", insert_line: 9, new_str: "z" })).toEqual({
      error: "Error: Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 4]",
    });
  });

  it("keeps CRLF line endings through an edit", async () => {
    await session.execute(`printf 'one\\r\\ntwo\\r\\n' > ${dir}/crlf.txt`);
    expect(await edit({ command: "view", path: "crlf.txt" })).toEqual({ content: "1: one\n2: two" });
    expect(await edit({ command: "str_replace", path: "crlf.txt", old_str: "one\ntwo", new_str: "1\n2" })).toEqual({
      content: "Successfully replaced text at exactly one location.",
    });
    expect((await session.execute(`od -c ${dir}/crlf.txt`)).output).toContain("1  \\r  \\n   2  \\r  \\n");
  });

  it("views a directory two levels deep without hidden entries", async () => {
    await session.execute(
      `mkdir -p ${dir}/tree/a/b/c && touch ${dir}/tree/a/f ${dir}/tree/.hidden ${dir}/tree/a/b/c/deep`,
    );
    const [head, ...entries] = String((await edit({ command: "view", path: `${dir}/tree` })).content).split("\n");
    expect(head).toBe(`Here's the files and directories up to 2 levels deep in ${dir}/tree, excluding hidden items:`);
    expect(entries.sort()).toEqual([`${dir}/tree`, `${dir}/tree/a`, `${dir}/tree/a/b`, `${dir}/tree/a/f`]);
  });

  it("cuts a view at max_characters, and declares max_characters to Claude", async () => {
    await session.execute(`seq 1 5000 > ${dir}/long.txt`);
    const small = createTextEditorTool({ maxCharacters: 100 }) as ToolDefinition;
    const { content } = await edit({ command: "view", path: "long.txt" }, small);
    expect(content).toMatch(
      /^1: 1\n2: 2\n[\s\S]*\n\[The view was cut at 100 characters after line \d+ of 5000; view_range shows the rest\.\]$/,
    );
    expect(String(content).length).toBeLessThan(200);
    expect(small.native).toEqual({
      anthropic: { type: "text_editor_20250728", name: "str_replace_based_edit_tool", max_characters: 100 },
    });
  });

  it("refuses in Anthropic's words: bad parameters, a directory to edit, binaries, protected paths", async () => {
    expect(await edit({ command: "str_replace", path: "primes.py", new_str: "x" })).toEqual({
      error: "Error: Parameter `old_str` is required for command: str_replace",
    });
    expect(await edit({ command: "insert", path: "primes.py", new_str: "x" })).toEqual({
      error: "Error: Parameter `insert_line` is required for command: insert",
    });
    expect(await edit({ command: "create", path: "c.txt" })).toEqual({
      error: "Error: Parameter `file_text` is required for command: create",
    });
    expect(await edit({ command: "view", path: "primes.py", view_range: [20, 30] })).toEqual({
      error:
        "Error: Invalid `view_range`: [20, 30]. Its first element `20` should be within the range of lines of the file: [1, 11]",
    });
    expect(await edit({ command: "view", path: dir, view_range: [1, 2] })).toEqual({
      error: "Error: The `view_range` parameter is not allowed when `path` points to a directory.",
    });
    expect(await edit({ command: "str_replace", path: dir, old_str: "a" })).toEqual({
      error: `Error: The path ${dir} is a directory and only the \`view\` command can be used on directories`,
    });
    expect(await edit({ command: "undo_edit", path: "primes.py" })).toMatchObject({
      error: expect.stringMatching(/^Error: Invalid arguments for str_replace_based_edit_tool: command must be one of/),
    });
    await session.execute(`head -c 2000 /dev/urandom > ${dir}/blob.bin`);
    expect(await edit({ command: "view", path: "blob.bin" })).toEqual({
      error: "Error: blob.bin is a binary file; view shows text files.",
    });
    expect(await edit({ command: "create", path: "/etc/shellwright-editor-test", file_text: "x" })).toEqual({
      error: expect.stringMatching(/^Error: Permission denied\. Cannot write to file\. Write denied: '\/etc\//),
    });
  });
});
