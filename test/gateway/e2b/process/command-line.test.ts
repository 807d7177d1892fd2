/**
 * A Start request's program as one command for the session's shell, run for
 * real through bash so the quoting is proven, not just compared.
 */

import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { checkEnvs, commandLine, withEnvs } from "../../../../src/gateway/e2b/process/command-line.js";

const bash = (script: string, input = ""): string => execFileSync("bash", ["-c", script], { encoding: "utf8", input });

describe("commandLine", () => {
  it("runs the SDK's `bash -l -c cmd` as cmd itself, in the session's shell", () => {
    expect(commandLine("/bin/bash", ["-l", "-c", "cd /usr; pwd"])).toBe("cd /usr; pwd");
    expect(commandLine("bash", ["-c", "echo x"])).toBe("echo x");
  });

  it("quotes any other program and its arguments", () => {
    const line = commandLine("printf", ["%s|", "a b", "it's", "$HOME", ""]);
    expect(bash(line)).toBe("a b|it's|$HOME||");
    // bash with more arguments after the script is a program like any other.
    expect(bash(commandLine("/bin/bash", ["-c", 'echo "$0:$1"', "zero", "one"]))).toBe("zero:one\n");
  });

  it("gives envs to that command only, values exactly, none of them in the script", () => {
    const envs = { A: "it's", B: "$(touch /nonexistent-e2b-probe) `x` \\n\nline2 é ✓", C: "" };
    const { command, stdin } = withEnvs(
      commandLine("/bin/bash", ["-l", "-c", 'echo "$A|$B|$C"; bash -c \'echo "$B"\'']),
      envs,
    );
    for (const value of [envs.A, envs.B]) expect(command).not.toContain(value);
    expect(bash(`${command}; echo "after:\${A-unset}:\${__sw_e0-unset}"`, stdin)).toBe(
      `it's|${envs.B}|\n${envs.B}\nafter:unset:unset\n`,
    );
  });

  it("runs the command with stdin from /dev/null once the values are read, and not at all when they are missing", () => {
    const { command, stdin } = withEnvs('cat; echo "[$A]"', { A: "v" });
    expect(bash(command, `${stdin}more input`)).toBe("[v]\n");
    expect(() => bash(command, "")).toThrow(/did not arrive/);
  });

  it("refuses an empty program and a variable name a shell cannot take, naming it", () => {
    expect(() => commandLine("", [])).toThrow(expect.objectContaining({ code: Code.InvalidArgument }));
    expect(() => checkEnvs({ "A=B": "x" })).toThrow(/invalid variable name "A=B"/);
    expect(() => checkEnvs({ "1A": "x" })).toThrow(/"1A"/);
    const nul = (() => checkEnvs({ KEY: "sec\0ret" })) as () => void;
    expect(nul).toThrow(/process\.envs\.KEY contains a NUL byte/);
    expect(nul).not.toThrow(/sec/);
  });
});
