/**
 * A fast-path job on its own, in a bash set up as the launcher leaves it: what
 * it writes to its state file decides whether the helper commits. A command
 * that cannot change the state writes `#SAME <status>` and no dump; any doubt
 * (a function or an alias of the same name, a moved cwd) writes the dump,
 * ending `#OK <status> <cwd>`.
 */

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildFastCallScript, jobDefinitions } from "../../src/core/fast-script.js";

const dir = mkdtempSync(join(tmpdir(), "sw-fast-job-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs one job after `setup` (the session's state) and returns the last lines of its state file. */
function job(setup: string, command: string): { exit: number; ends: string[]; bytes: number; output: string } {
  const cwd = join(dir, "cwd");
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(dir, "1.c"), buildFastCallScript({ command, cwd, sessionCwd: true }));
  rmSync(join(dir, "1.s"), { force: true });
  const out = execFileSync(
    "bash",
    [
      "-c",
      `${setup}\n${jobDefinitions()}\n__sw_al=1 __swl_d=${dir} __swl_id=1; builtin shopt -u expand_aliases\n` +
        `( IFS= builtin read -r -d '' s < ${dir}/1.c; builtin eval "$s" ) 2>&1; builtin printf 'exit %s' "$?"`,
    ],
    { cwd: "/", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir } },
  ).toString();
  const state = readFileSync(join(dir, "1.s"), "utf8");
  return {
    exit: Number(/exit (\d+)$/.exec(out)?.[1]),
    output: out.replace(/exit \d+$/, ""),
    ends: state.split("\n").filter((line) => line.startsWith("#")),
    bytes: state.length,
  };
}

describe("a fast-path job's state file", () => {
  const cwd = join(dir, "cwd");

  it("holds only #SAME for a command made of programs and pure builtins, with its exit code", () => {
    expect(job("", "true")).toEqual({ exit: 0, ends: ["#SAME 0"], bytes: "#SAME 0\n".length, output: "" });
    expect(job("", "ls / >/dev/null && [ -d / ] && false")).toMatchObject({ exit: 1, ends: ["#SAME 1"] });
    // Only paths: no word to check for a function or an alias.
    expect(job("", "/bin/true a b")).toMatchObject({ exit: 0, ends: ["#SAME 0"] });
  });

  it("traces nothing of its own after a command that turned xtrace on", () => {
    // The launcher starts every job with xtrace off (options e, u, x and v do not persist), so only such a command can.
    const traced = job("", "set -x; echo hi");
    expect(traced).toMatchObject({ exit: 0, ends: [`#OK 0 ${cwd}`] });
    // One `+` per eval level: the harness nests two.
    expect(traced.output).toMatch(/^\++ echo hi\nhi\n$/);
  });

  it("holds the whole dump when a command word is a function or an alias", () => {
    const fn = job("ls() { export FROM_FN=1; }", "ls");
    expect(fn.ends).toEqual([`#OK 0 ${cwd}`]);
    expect(readFileSync(join(dir, "1.s"), "utf8")).toContain('declare -x FROM_FN="1"');
    expect(job("builtin shopt -s expand_aliases; alias true='cd /'", "true").ends).toEqual(["#OK 0 /"]);
    expect(job("echo() { return 4; }", "echo hi")).toMatchObject({ exit: 4, ends: [`#OK 4 ${cwd}`] });
  });

  it("holds the whole dump for a command that may change the state, or a cwd a program renamed", () => {
    expect(job("", "cd /").ends).toEqual(["#OK 0 /"]);
    expect(job("", "export A=1; (exit 3)")).toMatchObject({ exit: 3, ends: [`#OK 3 ${cwd}`] });
    expect(job("", `mv ${cwd} ${cwd}-moved`).ends).toEqual([`#OK 0 ${cwd}-moved`]);
    rmSync(`${cwd}-moved`, { recursive: true });
  });
});
