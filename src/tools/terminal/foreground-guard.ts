/**
 * Foreground commands that would never return, refused before they run.
 *
 * A dev server started in the foreground (`npm run dev`, `vite`, `uvicorn`,
 * `python3 -m http.server`, …) holds the call until its timeout, and
 * `nohup cmd &`, `setsid -f cmd` or `cmd & disown` start a process that the
 * process tool cannot see. Both are answered at once with advice to use
 * `background: true`, where the process is tracked. An interactive editor
 * (`vim file`, `nano`, `emacs -nw`) would wait for keys nothing can type, and
 * is answered with the file tools and `git commit -m` instead (the session's
 * EDITOR and GIT_EDITOR are a stand-in that says the same:
 * src/core/editor-defaults.ts). A plain `cmd &` stays
 * allowed (it returns at once), and so does anything bounded by a prefix we
 * do not look through (`timeout 5 vite`).
 *
 * The check reads the command the way bash splits it, only far enough to be
 * useful: quoted strings, comments and here-document bodies are blanked
 * first, so `echo "npm run dev"` or `grep uvicorn log` never match; then each
 * simple command is judged by its first word, after assignments and
 * transparent prefixes (sudo, env, npx, uv run, …).
 */

export const WRAPPER_GUIDANCE =
  "Foreground command uses shell-level background wrappers (nohup/disown/setsid). Use terminal(background=true) so the process is tracked " +
  "(the process tool can poll it, read its log, wait for it and kill it), then run readiness checks and tests in separate commands.";

export const SERVER_GUIDANCE =
  "This foreground command appears to start a long-lived server/watch process. Run it with background=true, " +
  "verify readiness (health endpoint/log signal), then execute tests in a separate command.";

export const EDITOR_GUIDANCE =
  "This foreground command opens an interactive editor (vi, vim, nano, emacs, …): nothing can type into it here, so it would " +
  "wait until the timeout. Read a file with read_file (or sed -n '1,80p'), change it with patch or write_file (or sed -i, " +
  'a heredoc); for git, use git commit -m "message" (or -F file, --no-edit).';

/** One simple command: its words, and whether a `&` sends it to the background. */
interface Segment {
  words: string[];
  background: boolean;
}

/** The advice for a foreground command that should not run in the foreground, or undefined. */
export function foregroundGuidance(command: string): string | undefined {
  const segments = splitCommands(blankLiterals(command));
  let server = false;
  for (const segment of segments) {
    const words = stripPrefixes(segment.words);
    if (words.length === 0) continue;
    const name = baseName(words[0]!);
    if (name === "disown") return WRAPPER_GUIDANCE;
    if ((name === "nohup" || name === "setsid") && (segment.background || /^-\w*f|^--fork$/.test(words[1] ?? "")))
      return WRAPPER_GUIDANCE;
    if (!segment.background && isEditor(words)) return EDITOR_GUIDANCE;
    if (!segment.background && !asksForHelp(words) && isServer(stripPrefixes(words.slice(isWrapper(name) ? 1 : 0))))
      server = true;
  }
  return server ? SERVER_GUIDANCE : undefined;
}

const isWrapper = (name: string): boolean => name === "nohup" || name === "setsid";

/**
 * The command with the content of quotes, here-documents and comments
 * replaced by placeholders, so no word inside them can look like a command.
 */
export function blankLiterals(command: string): string {
  // Here-document bodies first: their lines are data, whatever they say.
  const lines = command.split("\n");
  const kept: string[] = [];
  const pending: string[] = [];
  for (const line of lines) {
    if (pending.length > 0) {
      const delimiter = pending[0]!;
      if (line.replace(/^\t+/, "") === delimiter) pending.shift();
      kept.push("");
      continue;
    }
    kept.push(line);
    for (const match of line.matchAll(/<<-?\s*(['"]?)([A-Za-z0-9_.-]+)\1/g)) pending.push(match[2]!);
  }
  // ${…} is a parameter expansion, not a group: its braces must not split a command.
  const text = kept.join("\n").replace(/\$\{[^}]*\}/g, "V");
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\") {
      out += "_";
      i++;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      out += "Q";
      i = end === -1 ? text.length : end;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += "Q";
      i = j;
    } else if (c === "#" && (i === 0 || /[\s;&|(]/.test(text[i - 1]!))) {
      const end = text.indexOf("\n", i);
      i = end === -1 ? text.length : end - 1;
    } else out += c;
  }
  return out;
}

/** Splits at ; && || | & newlines, ( ) $( and backquotes; a lone `&` marks the command before it as backgrounded. */
export function splitCommands(text: string): Segment[] {
  const segments: Segment[] = [];
  let current = "";
  const end = (background: boolean): void => {
    const words = current.trim().split(/\s+/).filter(Boolean);
    if (words.length > 0) segments.push({ words, background });
    current = "";
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "&") {
      const previous = text[i - 1];
      if (next === "&") {
        end(false);
        i++;
      } else if (next === ">" || previous === ">" || previous === "<")
        current += c; // &> >& <&: redirections
      else end(true);
    } else if (c === "|") {
      end(false);
      if (next === "|" || next === "&") i++;
    } else if (c === ";" || c === "\n" || c === "(" || c === ")" || c === "`" || c === "{" || c === "}") {
      if (c === "(" && current.endsWith("$")) current = current.slice(0, -1);
      end(false);
    } else current += c;
  }
  end(false);
  return segments;
}

const baseName = (word: string): string => word.slice(word.lastIndexOf("/") + 1);

/** Words after which bash expects a command. */
const SHELL_KEYWORDS = new Set(["!", "if", "then", "else", "elif", "while", "until", "do"]);

/** Drops assignments, keywords and words that only run the next word (sudo, env, nice, npx, uv run, …). */
function stripPrefixes(words: string[]): string[] {
  let i = 0;
  for (;;) {
    const word = words[i];
    if (word === undefined) return [];
    const name = baseName(word);
    const next = words[i + 1] ?? "";
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word) || SHELL_KEYWORDS.has(word)) i++;
    else if (["sudo", "env", "exec", "command", "time", "npx", "pnpx", "bunx", "doas"].includes(name)) {
      i++;
      while (/^-/.test(words[i] ?? "") || (name === "env" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i] ?? ""))) {
        // sudo -u USER and env -u NAME take a value.
        if (/^-[ugC]$/.test(words[i]!) && name !== "npx") i++;
        i++;
      }
    } else if (name === "nice") i += /^-n$/.test(next) ? 3 : /^-/.test(next) ? 2 : 1;
    else if (
      (["uv", "poetry", "pipenv", "pdm", "hatch", "rye"].includes(name) && next === "run") ||
      (name === "bundle" && next === "exec") ||
      (["npm", "pnpm", "yarn", "bun"].includes(name) && ["exec", "dlx", "x"].includes(next))
    )
      i += 2;
    else return words.slice(i);
  }
}

const asksForHelp = (words: string[]): boolean =>
  words.some((word) => ["--help", "-h", "--version", "-V", "-v", "help"].includes(word));

/** Full-screen editors with no batch mode worth allowing: any run but a help or version query waits for keys. */
const SCREEN_EDITORS = new Set(["nano", "pico", "rnano", "micro", "joe", "jed", "mcedit", "ne", "hx", "helix", "kak"]);

/**
 * True when `words` (prefixes stripped) open an interactive editor on the
 * terminal. Their batch modes stay allowed: `vim -es`/`ex -s` (Ex mode reading
 * commands), `emacs --batch`, and help or version queries.
 */
export function isEditor(words: string[]): boolean {
  if (words.length === 0) return false;
  const name = baseName(words[0]!);
  const args = words.slice(1);
  const has = (...flags: string[]): boolean => args.some((arg) => flags.includes(arg));
  if (has("--help", "-h", "--version")) return false;
  if (/^(vi|vim|nvim|view|vimdiff|nvi|elvis|ex)$/.test(name))
    // Ex mode (-e, -E, -es, -Es, ex itself) reads commands from stdin and ends with it; `-s` silences it.
    return !(name === "ex" || args.some((arg) => /^-[a-zA-Z]*[eE]/.test(arg) && !arg.startsWith("--")));
  if (name === "emacs")
    return !has("--batch", "-batch", "--script", "-script", "--daemon", "--bg-daemon", "--fg-daemon");
  if (name === "emacsclient") return has("-t", "-nw", "--tty");
  return SCREEN_EDITORS.has(name);
}

/** True when `words` (prefixes stripped) start a server or watcher that runs until stopped. */
export function isServer(words: string[]): boolean {
  if (words.length === 0) return false;
  const name = baseName(words[0]!);
  const args = words.slice(1);
  const first = args[0] ?? "";
  const rest = args.join(" ");
  const has = (...flags: string[]): boolean => args.some((arg) => flags.includes(arg));
  switch (name) {
    case "npm":
    case "pnpm":
    case "yarn":
    case "bun": {
      const script = first === "run" || first === "run-script" ? (args[1] ?? "") : first;
      return /^(dev|start|serve|watch|develop|preview)(:\S*)?$/.test(script);
    }
    case "vite":
      return !["build", "optimize"].includes(first);
    case "next":
      return ["dev", "start"].includes(first);
    case "nuxt":
    case "nuxi":
      return ["dev", "preview", "start"].includes(first);
    case "astro":
    case "remix":
    case "svelte-kit":
      return ["dev", "preview"].includes(first);
    case "gatsby":
      return ["develop", "serve"].includes(first);
    case "ng":
      return first === "serve" || first === "s";
    case "react-scripts":
      return first === "start";
    case "webpack":
      return first === "serve" || has("--watch", "-w");
    case "tsc":
      return has("--watch", "-w");
    case "jest":
      return has("--watch", "--watchAll");
    case "nodemon":
    case "webpack-dev-server":
    case "http-server":
    case "live-server":
    case "serve":
    case "uvicorn":
    case "gunicorn":
    case "hypercorn":
    case "daphne":
    case "waitress-serve":
    case "rackup":
    case "puma":
      return true;
    case "flask":
    case "streamlit":
      return first === "run";
    case "django-admin":
      return first === "runserver";
    case "jupyter":
      return ["notebook", "lab", "server"].includes(first);
    case "rails":
      return first === "s" || first === "server";
    case "php":
      return has("-S") || /^artisan serve\b/.test(rest);
    case "hugo":
      return first === "server" || first === "serve";
    case "jekyll":
    case "mkdocs":
    case "hexo":
      return first === "serve" || first === "server" || first === "s";
    case "docker":
    case "podman":
      return first === "compose" && args[1] === "up" && !has("-d", "--detach");
    case "docker-compose":
    case "podman-compose":
      return first === "up" && !has("-d", "--detach");
    case "cargo":
      return first === "watch";
    default:
      if (/^python(\d+(\.\d+)?)?$/.test(name)) {
        const module = args[args.indexOf("-m") + 1];
        if (args.includes("-m") && module !== undefined) {
          if (["http.server", "SimpleHTTPServer", "uvicorn", "gunicorn", "hypercorn"].includes(module)) return true;
          return isServer(args.slice(args.indexOf("-m") + 1));
        }
        return /(^|\/)manage\.py$/.test(first) && args[1] === "runserver";
      }
      return false;
  }
}
