/**
 * How `shellwright exec` reads its words (src/cli/command-words.ts), run
 * through the real CLI: several words are an argv, run as given; one word
 * is a shell command line.
 */

import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { commandOf } from "../../src/cli/command-words.js";
import { cli, cliHome } from "../helpers/cli.js";

const home = cliHome();
afterAll(() => home.remove());

describe("exec's words", () => {
  it("several words are an argv: `exec -- touch 'my file.txt'` makes one file", () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-argv-"));
    try {
      expect(cli(home, ["exec", "--cwd", dir, "--", "touch", "my file.txt"]).code).toBe(0);
      expect(readdirSync(dir)).toEqual(["my file.txt"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("no word of an argv is parsed again: quotes, $, globs, ; and assignments are plain text", () => {
    const words = ["it's", '"q"', "$HOME", "*", "a;b", "$(id)", "FOO=1", "  spaced  ", ""];
    const run = cli(home, ["exec", "--", "printf", "[%s]\\n", ...words]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toBe(words.map((word) => `[${word}]\n`).join(""));
    // A first word that looks like an assignment or a keyword is a program name.
    expect(cli(home, ["exec", "--", "FOO=1", "true"]).stdout).toMatch(/FOO=1: command not found/);
    expect(cli(home, ["exec", "--", "if", "true"]).stdout).toMatch(/if: command not found/);
  });

  it("an argv's error shows no wrapper: no `eval`, no syntax error from a word", () => {
    const run = cli(home, ["exec", "--", "echo $((1+", "b"]);
    expect(run.code).toBe(127);
    expect(run.stdout).toBe("bash: line 1: echo $((1+: command not found\n");
    expect(run.stdout).not.toContain("eval");
  });

  it("one word is a shell command line, as before", () => {
    expect(cli(home, ["exec", "cd / && echo $((6*7)) $PWD"])).toMatchObject({ code: 0, stdout: "42 /\n" });
    expect(cli(home, ["exec", "--", "exit 7"]).code).toBe(7);
  });

  it("quotes every word, simple ones too", () => {
    expect(commandOf(["ls", "-la"])).toBe("'ls' '-la'");
    expect(commandOf(["echo", "it's"])).toBe(`'echo' 'it'\\''s'`);
    expect(commandOf(["cd /tmp && ls"])).toBe("cd /tmp && ls");
  });
});
