/**
 * How `shellwright exec` reads the words after its flags. One word is a
 * shell command line, run as typed into the session's shell:
 * `exec 'cd /tmp && make'`. Two or more are an argv, run as given, each word
 * quoted for the shell, as `docker exec`, `kubectl exec --`, `sudo` and
 * `env` take theirs: `exec -- touch 'my file.txt'` makes one file, and no
 * word is parsed again (no `;`, `$` or glob is special in it).
 *
 * So a program whose one word needs quoting is given quoted for the shell
 * (`exec "'./my script'"`) or with an argument.
 */

import { shellQuote } from "../core/script.js";

/** The command line `words` stand for: the one word as is, or every word quoted. */
export function commandOf(words: readonly string[]): string {
  if (words.length === 1) return words[0]!;
  // Every word quoted, simple ones too: unquoted, `FOO=1` would be an assignment, `if` a keyword, `ll` an alias.
  return words.map(shellQuote).join(" ");
}
