/**
 * Commands that expand the shell's own pid (`$$`, `${$}`), recognised from
 * their text. On the fast path every call is a fork of one launcher, so
 * `$$` there is the launcher's pid, not the call's: `kill $$` would kill the
 * launcher and let the command go on. Such a command runs on the plain path,
 * where `$$` is the call's own shell, as in a terminal
 * (docs/fast-path.md).
 *
 * The scan follows quoting only as far as it must: a `$$` inside single
 * quotes is text for another program (`bash -c 'echo $$'`, `awk '{print
 * $$1}'`) and does not count, unless the command also runs `eval` or
 * `source`, which may hand that text back to this shell; anything else it
 * cannot be sure of counts (a heredoc, a comment), which only costs the
 * plain path's speed. What the text cannot show (a function defined by an
 * earlier call) is a difference docs/fast-path.md lists.
 */
const SHELL_PID_ANYWHERE = /\$\$|\$\{\$\}/;
/** Builtins that run text as this shell's code: the quoting seen here is not the quoting that counts. */
const REEVALUATES = /(^|[\s;&|(`{])(eval|source|\.)(?=\s)/;

export function expandsShellPid(command: string): boolean {
  if (SHELL_PID_ANYWHERE.test(command) && REEVALUATES.test(command)) return true;
  let quote: "'" | '"' | "$'" | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
      continue;
    }
    if (c === "\\") {
      i++;
      continue;
    }
    if (quote === "$'") {
      if (c === "'") quote = undefined;
      continue;
    }
    if (c === '"') {
      quote = quote === '"' ? undefined : '"';
      continue;
    }
    if (c === "'" && quote === undefined) {
      quote = "'";
      continue;
    }
    if (c !== "$") continue;
    const next = command[i + 1];
    if (next === "$" || (next === "{" && command[i + 2] === "$")) return true;
    if (next === "'" && quote === undefined) {
      quote = "$'";
      i++;
    }
  }
  return false;
}
