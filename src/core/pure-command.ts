/**
 * Commands that cannot change the session's state, recognised from their
 * text, so a fast-path call can skip the state dump (docs/fast-path.md).
 *
 * Only the shell itself (a builtin, a function, an alias, an expansion that
 * assigns) can change what persists: cwd, variables, functions, aliases,
 * options, umask, limits. An external program cannot, whatever it does. So
 * a command made only of simple commands whose command word is an external
 * program or a builtin that changes nothing (`true`, `echo`, `test`, …),
 * with arguments and redirections that assign nothing, leaves the state as
 * it found it (the cwd excepted, which the job still checks: a program can
 * remove or rename it).
 *
 * The grammar accepted is deliberately small. Anything outside it (a
 * keyword, a subshell, `$(…)`, `${x:=…}`, `${x:-$(…)}`, an assignment, a quoted or escaped
 * command word, `{fd}>`, a heredoc, a comment) counts as "may change the
 * state" and takes the full dump. Whether a command word is a function or an
 * alias is only known in the session: this returns the words for the job to
 * check there.
 */

/** Builtins that read but never change the shell's state. */
const PURE_BUILTINS = new Set(["true", "false", ":", "echo", "test", "[", "pwd"]);

/** Bash's builtins (`compgen -b`, bash 5.2) and keywords (`compgen -k`): only the pure builtins above pass. */
const SHELL_WORDS = new Set(
  (
    ". : [ alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs disown " +
    "echo enable eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile " +
    "popd printf pushd pwd read readarray readonly return set shift shopt source suspend test times trap true " +
    "type typeset ulimit umask unalias unset wait " +
    "if then else elif fi case esac for select while until do done in function time { } ! [[ ]] coproc"
  ).split(" "),
);

/** A command word taken as is: no quoting, expansion, glob, tilde or assignment. */
const COMMAND_WORD = /^(?:[A-Za-z0-9_./+:,-]+|\[)$/;
/**
 * `$NAME`, `${NAME}`, `${#NAME}`, a special parameter, or a default or
 * alternative value of plain text (`${NAME:-word}`, `${NAME+word}`): the
 * expansions that assign nothing. `:=` assigns, `:?` ends the shell, a
 * substring's offset is arithmetic (`${x:i++}`), and a word with `$`, a quote
 * or a backquote could hold any of those: all take the full dump.
 */
const EXPANSION =
  /^\$(?:\{#?[A-Za-z_][A-Za-z0-9_]*(?::?[-+][A-Za-z0-9_./,:@%+= -]*)?\}|[A-Za-z_][A-Za-z0-9_]*|[0-9?#$!@*-])/;
const SEPARATOR = /^(?:&&|\|\||\|&|[;&|\n])/;
/** A redirection operator, with its optional file descriptor number. */
const REDIRECTION = /^(?:&>>?|[0-9]*(?:>>|>\||>&|<&|<>|>|<))/;

const MAX_COMMAND_CHARS = 16_384;

type Token = { kind: "word"; text: string; plain: boolean } | { kind: "separator"; op: string } | { kind: "redirect" };

/**
 * The command words of a command that changes no state, provided none of
 * them is a function or an alias in the session (the job checks that);
 * undefined when the command may change the state.
 */
export function pureCommandWords(command: string): string[] | undefined {
  // A longer one is a script, not worth reading: it takes the full dump.
  if (command.length > MAX_COMMAND_CHARS) return undefined;
  const tokens = tokenize(command);
  if (tokens === undefined) return undefined;
  const words = new Set<string>();
  let atCommand = true;
  let lastSeparator = "\n";
  let sawCommand = false;
  for (let t = 0; t < tokens.length; t++) {
    const token = tokens[t]!;
    if (token.kind === "separator") {
      // An empty command before `;`, `&&`, `|`… is a syntax error; blank lines are not.
      if (atCommand && token.op !== "\n") return undefined;
      atCommand = true;
      lastSeparator = token.op;
    } else if (token.kind === "redirect") {
      // Redirections before the command word are allowed by bash; not here (keeps the command word first).
      if (atCommand || tokens[t + 1]?.kind !== "word") return undefined;
      t++;
    } else if (atCommand) {
      if (!token.plain || !COMMAND_WORD.test(token.text)) return undefined;
      if (SHELL_WORDS.has(token.text) && !PURE_BUILTINS.has(token.text)) return undefined;
      // A name with a slash is run as a file: never a function or an alias.
      if (!token.text.includes("/")) words.add(token.text);
      atCommand = false;
      sawCommand = true;
    }
  }
  if (!sawCommand || (atCommand && !["\n", ";", "&"].includes(lastSeparator))) return undefined;
  return [...words];
}

function tokenize(command: string): Token[] | undefined {
  const tokens: Token[] = [];
  let i = 0;
  while (i < command.length) {
    const rest = command.slice(i);
    if (rest[0] === " " || rest[0] === "\t") {
      i++;
      continue;
    }
    const redirection = REDIRECTION.exec(rest);
    if (redirection !== null) {
      i += redirection[0].length;
      // A heredoc or here-string (`<<`, `<<<`), or process substitution.
      if (command[i] === "<" || command[i] === "(") return undefined;
      tokens.push({ kind: "redirect" });
      continue;
    }
    if (rest.startsWith(";;")) return undefined;
    const separator = SEPARATOR.exec(rest);
    if (separator !== null) {
      i += separator[0].length;
      tokens.push({ kind: "separator", op: separator[0] });
      continue;
    }
    const word = readWord(command, i);
    if (word === undefined) return undefined;
    i = word.end;
    // A word glued to a redirection is a `{fd}>` (which assigns fd) or worse.
    if (command[i] === "<" || command[i] === ">") return undefined;
    tokens.push({ kind: "word", text: word.text, plain: word.plain });
  }
  return tokens;
}

/** One word from `start`: its unquoted text, whether it had no quoting or expansion, and where it ends. */
function readWord(command: string, start: number): { text: string; plain: boolean; end: number } | undefined {
  let text = "";
  let plain = true;
  let i = start;
  while (i < command.length) {
    const c = command[i]!;
    if (" \t\n;&|<>".includes(c)) break;
    if ("`()#".includes(c)) return undefined;
    plain &&= !"'\"\\$".includes(c);
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) return undefined;
      i = end + 1;
    } else if (c === '"') {
      i++;
      while (command[i] !== '"') {
        if (i >= command.length || command[i] === "`") return undefined;
        if (command[i] === "\\") i += 2;
        else if (command[i] === "$") {
          const expansion = EXPANSION.exec(command.slice(i));
          if (expansion === null) return undefined;
          i += expansion[0].length;
        } else i++;
      }
      i++;
    } else if (c === "\\") {
      if (i + 1 >= command.length) return undefined;
      i += 2;
    } else if (c === "$") {
      const expansion = EXPANSION.exec(command.slice(i));
      if (expansion === null) return undefined;
      i += expansion[0].length;
    } else {
      text += c;
      i++;
    }
  }
  return { text, plain, end: i };
}
