/**
 * A Start request's program as one command for the session's shell, run for
 * real through bash so the quoting is proven, not just compared.
 */

import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { commandLine } from "../../../../src/gateway/e2b/process/command-line.js";

const bash = (script: string): string => execFileSync("bash", ["-c", script], { encoding: "utf8" });

describe("commandLine", () => {
  it("runs the SDK's `bash -l -c cmd` as cmd itself, in the session's shell", () => {
    expect(commandLine("/bin/bash", ["-l", "-c", "cd /usr; pwd"], {})).toBe("cd /usr; pwd");
    expect(commandLine("bash", ["-c", "echo x"], {})).toBe("echo x");
  });

  it("quotes any other program and its arguments", () => {
    const line = commandLine("printf", ["%s|", "a b", "it's", "$HOME", ""], {});
    expect(bash(line)).toBe("a b|it's|$HOME||");
    // bash with more arguments after the script is a program like any other.
    expect(bash(commandLine("/bin/bash", ["-c", 'echo "$0:$1"', "zero", "one"], {}))).toBe("zero:one\n");
  });

  it("gives envs to that command only, values exactly", () => {
    const line = commandLine("/bin/bash", ["-l", "-c", 'echo "$A|$B"; bash -c \'echo "$B"\''], {
      A: "it's",
      B: "$(touch /nonexistent-e2b-probe) `x` \\n",
    });
    expect(bash(`${line}; echo "after:\${A-unset}"`)).toBe(
      "it's|$(touch /nonexistent-e2b-probe) `x` \\n\n$(touch /nonexistent-e2b-probe) `x` \\n\nafter:unset\n",
    );
  });

  it("refuses an empty program and a variable name a shell cannot take, naming it", () => {
    expect(() => commandLine("", [], {})).toThrow(expect.objectContaining({ code: Code.InvalidArgument }));
    expect(() => commandLine("true", [], { "A=B": "x" })).toThrow(/invalid variable name "A=B"/);
    expect(() => commandLine("true", [], { "1A": "x" })).toThrow(/"1A"/);
  });
});
