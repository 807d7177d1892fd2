/**
 * Exit codes that are not errors. A model that sees `grep` exit 1 tends to
 * "fix" a search that simply found nothing; a one-line meaning stops that.
 */

const MEANINGS: Record<string, Record<number, string>> = {
  grep: { 1: "No matches found (not an error)" },
  diff: { 1: "Files differ (expected, not an error)" },
  find: { 1: "Some directories were inaccessible (partial results may still be valid)" },
  test: { 1: "Condition evaluated to false (expected, not an error)" },
  curl: {
    6: "Could not resolve host",
    7: "Failed to connect to host",
    22: "HTTP response code indicated error (e.g. 404, 500)",
    28: "Operation timed out",
  },
  git: { 1: "Non-zero exit (often normal — e.g. 'git diff' returns 1 when files differ)" },
};
const ALIASES: Record<string, string> = {
  egrep: "grep",
  fgrep: "grep",
  rg: "grep",
  ag: "grep",
  ack: "grep",
  colordiff: "diff",
  "[": "test",
  "[[": "test",
};

/**
 * The meaning of `exitCode` for the command that decided it (the last one of
 * a pipeline or `&&`/`||`/`;` list), or undefined when it is a plain failure.
 */
export function exitCodeMeaning(command: string, exitCode: number): string | undefined {
  if (exitCode === 0) return undefined;
  const segments = command.split(/\|\||&&|[|;\n]/);
  const last = segments[segments.length - 1] ?? "";
  const words = last.trim().split(/\s+/);
  // Skip `VAR=value` prefixes and wrappers that do not change the exit code.
  let index = 0;
  while (
    index < words.length &&
    (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[index]!) ||
      ["sudo", "command", "time", "exec", "env"].includes(words[index]!))
  )
    index++;
  const word = words[index];
  if (word === undefined) return undefined;
  const base = word.slice(word.lastIndexOf("/") + 1);
  return MEANINGS[ALIASES[base] ?? base]?.[exitCode];
}
