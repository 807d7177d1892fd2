import { describe, expect, it } from "vitest";
import { pureCommandWords } from "../../src/core/pure-command.js";

describe("pureCommandWords", () => {
  it.each([
    ["true", ["true"]],
    ["ls -la /tmp", ["ls"]],
    ["npm test 2>&1 | tail -5", ["npm", "tail"]],
    ['grep -rn "a $b ${c}" . >/dev/null', ["grep"]],
    ['echo "$A/${B:-none}" ${C-x} "${D:+a b}" ${#E}', ["echo"]],
    ["[ -e x ] && echo yes || echo no", ["[", "echo"]],
    ["./run.sh a 'b c' \\;", []],
    ["sleep 1 &", ["sleep"]],
    ["make; make install\n", ["make"]],
    ["ls 2>&- <in", ["ls"]],
  ])("takes %j as changing nothing unless its words %j are functions or aliases", (command, words) => {
    expect(pureCommandWords(command)).toEqual(words);
  });

  it.each([
    // builtins and keywords that change state
    "cd /tmp",
    "export A=1",
    "source ./env.sh",
    ". ./env.sh",
    "builtin cd /",
    "command cd /",
    "eval ls",
    "exec ls",
    "printf -v x 1",
    "read x",
    "umask 077",
    "ulimit -n 64",
    "set -o pipefail",
    "shopt -s extglob",
    "trap 'x' EXIT",
    "alias l=ls",
    "unset PATH",
    "[[ -e x ]]",
    "if true; then cd /; fi",
    "for f in 1; do cd /; done",
    "time cd /",
    "! cd /",
    "{ cd /; }",
    "f() { cd /; }",
    // assignments and expansions that assign
    "A=1",
    "A=1 ls",
    "a[1]=2",
    "echo ${A:=1}",
    "echo ${A=1}",
    "echo ${A:?gone}",
    "echo ${A:-$(cd /)}",
    'echo "${A:-`cd /`}"',
    "echo ${A:-${B:=1}}",
    "echo ${A:i++}",
    "echo ${A:0:2}",
    "echo ${A:-'x'}",
    "echo $((A=1))",
    "echo $[A=1]",
    "echo $(cd /)",
    'echo "$(cd /)"',
    "echo `cd /`",
    'echo "`cd /`"',
    "ls {fd}>x",
    "ls x>y",
    "cat <(ls)",
    "cat <<EOF\nx\nEOF",
    "cat <<<x",
    // command words that are not what they look like
    "\\cd /",
    "'cd' /",
    '"cd" /',
    "c\\d /",
    "$CMD /",
    "~/bin/x",
    "l* /",
    // shapes outside the grammar
    "(cd /)",
    "ls # cd /",
    "ls ;; ls",
    "ls |",
    "ls &&",
    "; ls",
    ">x ls",
    "",
    "   ",
    "echo 'unterminated",
    'echo "unterminated',
    "echo $",
  ])("takes %j as maybe changing the state", (command) => {
    expect(pureCommandWords(command)).toBeUndefined();
  });

  it("does not read a command over 16 KiB (it takes the full dump)", () => {
    expect(pureCommandWords(`echo ${"x ".repeat(8000)}`)).toEqual(["echo"]);
    expect(pureCommandWords(`echo ${"x ".repeat(10_000)}`)).toBeUndefined();
  });
});
