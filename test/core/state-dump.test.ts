/**
 * The state dump against real bash: a shell is set up, dumped, and the dump is
 * sourced by a fresh `env -i bash -c`, as every call does. Both shells then
 * print everything a terminal would keep; any difference is state lost.
 */

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CAPTURE_UMASK_LINE, stateDumpLines, UNSAVED_VARIABLES } from "../../src/core/state-dump.js";

const dir = mkdtempSync(join(tmpdir(), "state-dump-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Prints the state under comparison, one section per kind. Builtins only, so it changes nothing it prints. */
const PRINT_STATE = [
  "builtin echo '## variables'; builtin declare -p",
  "builtin echo '## functions'; builtin declare -f; builtin declare -Fx",
  "builtin echo '## aliases'; builtin alias -p",
  "builtin echo '## shopt'; builtin shopt -p",
  "builtin echo '## set'; builtin set +o",
  "builtin echo '## umask'; builtin umask",
  "builtin echo '## ulimit'; builtin ulimit -S -a",
  "builtin echo '## traps'; builtin trap -p",
].join("\n");

// Names whose values describe the running shell: they differ between any two shells.
const VOLATILE = new Set<string>([
  ...UNSAVED_VARIABLES,
  "_",
  "PIPESTATUS",
  "PPID",
  "BASHOPTS",
  "SHELLOPTS",
  "BASH_EXECUTION_STRING",
]);

function runBash(script: string, env: NodeJS.ProcessEnv = { SHLVL: "1", PATH: process.env.PATH }): string {
  const result = spawnSync("bash", ["-c", script], { env, encoding: "latin1" });
  if (result.error) throw result.error;
  return result.stdout;
}

/** The state with volatile variables dropped (bash ≥ 5 prints one variable per line, quoting newlines as $'\n'). */
function comparable(state: string): string {
  return state
    .split("\n")
    .filter((line) => {
      const name = /^declare -\S+ ([^=\s]+)/.exec(line)?.[1];
      // Posix mode lists untrapped signals as `trap -- - SIG`: no trap either way.
      if (line.startsWith("trap -- - ")) return false;
      return name === undefined || !VOLATILE.has(name);
    })
    .join("\n");
}

let n = 0;
/** Sets up a shell with `setup`, dumps it, and sources the dump in a fresh empty-environment bash. */
function roundTrip(setup: string): { before: string; after: string; snapshot: string } {
  const snapshot = join(dir, `snap-${n++}.sh`);
  const before = runBash(
    `${setup}\n${PRINT_STATE}\n${CAPTURE_UMASK_LINE}\nbuiltin umask 077\n{\n${stateDumpLines().join("\n")}\n} >| '${snapshot}' 2>/dev/null`,
  );
  const after = runBash(`builtin source '${snapshot}' >/dev/null 2>&1\n${PRINT_STATE}`, { SHLVL: "1" });
  return { before, after, snapshot: runBash(`builtin cat '${snapshot}'`) };
}

describe("stateDumpLines", () => {
  it("restores every variable, function, alias, option, umask and soft limit in a fresh shell", () => {
    const setup = String.raw`
      plain='a b'; export EXPORTED=$'tab\there'
      tricky=$'line1\nline2 "dq" \'sq\' $HOME \`bt\` \\ * ? [x] $(date) \x01\x1f\x7f é 漢字 \xe9\xff end'
      looks_quoted="\$'not ansi' %s %q"
      arr=(a "b c" '' $'d\ne'); sparse=([3]=x [10]=y); empty=()
      declare -A assoc=([k]=v ["key with space"]=$'v\n2' ['$(k)']='*' [é]=ü)
      declare -i int=41+1; declare -l lower=MiXeD; declare -u upper=MiXeD
      declare -r ro=fixed; declare -n ref=plain; declare -ax exported_arr=(1 2)
      declare -i declared_only; export EXPORTED_UNSET
      IFS=:; PS4='>> '; OPTIND=3; BASH_ENV=/nonexistent/env
      shopt -s extglob globstar nullglob dotglob; shopt -u checkwinsize sourcepath
      f_ext() { [[ $1 == +([0-9]) ]] && echo "num $1"; }
      my-func() { local x=$'a\nb'; echo "$x" | while read -r l; do echo "<$l>"; done; }
      exported_fn() { echo exported; }; export -f exported_fn
      alias ll='ls -l'; alias q="echo 'it''s' \"quoted\""
      set -o pipefail -o noclobber -o noglob -o allexport +o braceexpand +o hashall -o posix
      umask 027; ulimit -S -n 512; ulimit -S -c 0
      set -e -u; trap 'echo trapped' INT USR1
    `;
    const { before, after } = roundTrip(setup);
    // Sanity: the setup took effect in the first shell, so equality below means something.
    expect(before).toContain("declare -A assoc=");
    expect(before).toContain("set -o pipefail");
    expect(before).toMatch(/^0027$/m);
    expect(before).toMatch(/^trap -- 'echo trapped' (SIG)?INT$/m);

    // What does not persist, by design: errexit, nounset and traps; aliases always expand.
    const expected = comparable(before)
      .replace("shopt -u expand_aliases", "shopt -s expand_aliases")
      .replace("set -o errexit", "set +o errexit")
      .replace("set -o nounset", "set +o nounset")
      .replace(/## traps\n[^]*$/, "## traps\n");
    expect(comparable(after)).toBe(expected);
  });

  it("keeps the defaults of a fresh shell as they are", () => {
    const { before, after } = roundTrip("");
    expect(comparable(after)).toBe(comparable(before).replace("shopt -u expand_aliases", "shopt -s expand_aliases"));
  });

  it("leaves out the wrapper's variables and bash's dynamic ones", () => {
    const { snapshot, after } = roundTrip("__sw_private=1; __SHELLWRIGHT_X=2; RANDOM=7; SECONDS=100");
    expect(after).not.toMatch(/__sw_|__SHELLWRIGHT/);
    expect(snapshot).not.toMatch(/^declare -\S+ (RANDOM|SECONDS|LINENO|BASH_EXECUTION_STRING|FUNCNAME)=/m);
    // RANDOM is not reseeded to the same sequence on every call.
    const draws = new Set(
      [1, 2, 3].map(() => runBash(`builtin source '${join(dir, `snap-${n - 1}.sh`)}'; echo $RANDOM`)),
    );
    expect(draws.size).toBeGreaterThan(1);
  });

  it("keeps no reserved name read-only, nor the marks or the wrapper's variables at all, whatever readonly did", () => {
    const setup = [
      "export SHELLWRIGHT_CALL=stale SHELLWRIGHT_SESSION=s; __sw_x=1; OLDPWD=/old; export IFS=:",
      "readonly PWD OLDPWD IFS SHELLWRIGHT_CALL SHELLWRIGHT_SESSION __sw_x; kept=yes; readonly ro=fixed",
    ].join("; ");
    const { snapshot, after } = roundTrip(setup);
    expect(snapshot).not.toMatch(/SHELLWRIGHT_|__sw_x=|^declare -\S+ PWD=/m);
    // OLDPWD and IFS keep their values (and export), not the read-only attribute; other variables keep theirs.
    expect(after).toMatch(/^declare -x OLDPWD="\/old"$/m);
    expect(after).toMatch(/^declare -x IFS=":"$/m);
    expect(after).toMatch(/^declare -r ro="fixed"$/m);
    expect(after).toMatch(/^declare -- kept="yes"$/m);
    // The restored shell can still assign them: cd works, IFS can change.
    expect(
      runBash(
        `builtin source '${join(dir, `snap-${n - 1}.sh`)}' 2>/dev/null; exec 2>&1; cd /tmp && IFS=' ' && echo "$PWD ok"`,
      ),
    ).toBe("/tmp ok\n");
  });

  it("never raises a hard limit, and a soft limit above the new hard one is dropped quietly", () => {
    const { after } = roundTrip("ulimit -S -n 256");
    expect(after).toMatch(/open files\s+\(-n\) 256/);
    const output = runBash(
      `ulimit -n 200; builtin source '${join(dir, `snap-${n - 1}.sh`)}' >/dev/null 2>&1; ulimit -S -n; ulimit -H -n`,
    );
    expect(output).toBe("200\n200\n");
  });
});
