import { describe, expect, it } from "vitest";
import { expandsShellPid } from "../../src/core/shell-pid.js";

const EXPANDING = [
  "echo $$",
  "kill $$; echo survived",
  "kill -9 $$",
  'echo "pid $$"',
  "echo ${$}",
  "kill -- -$$",
  "echo 'a' $$",
  "echo $'x' $$",
  "cat <<EOF\n$$\nEOF",
  "# $$",
  "eval 'kill $$'; echo survived",
  "x='kill $$'; eval \"$x\"",
  "echo 'kill $$' > /tmp/k; source /tmp/k",
  "true && . <(echo 'echo ${$}')",
];

const NOT_EXPANDING = [
  "echo $BASHPID",
  "bash -c 'echo $$ > /tmp/p; exec sleep 1'",
  "awk '{print $$1}' f",
  "echo \\$\\$",
  "echo \\$$",
  "echo $'\\'$$'",
  "echo $PPID $! $? $#",
  "printf '%s' \"$HOME\"",
  "eval 'echo $BASHPID'",
  "./run.sh 'a$$b'",
];

describe("expandsShellPid", () => {
  it.each([
    ...EXPANDING.map((command) => ({ command, counted: true })),
    ...NOT_EXPANDING.map((command) => ({ command, counted: false })),
  ])("counted $counted: $command", ({ command, counted }) => {
    expect(expandsShellPid(command)).toBe(counted);
  });
});
