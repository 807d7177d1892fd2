/**
 * A foreground program that waits for keys on a terminal nobody types into:
 * vi started by `git commit` once the session's EDITOR stand-in was unset,
 * a REPL under a pseudo-terminal the command made itself (`script -qc
 * python3`), a password prompt. It would hold the call until its timeout.
 *
 * The probe is bash over /proc, run as an isolated call of the same session
 * (so it runs where the program runs, on every backend), only once the call
 * has printed nothing for a while. A process is taken as waiting on a
 * terminal when all of these hold:
 *
 * - it carries this call's tag (TAG_VARIABLE, set by the command's prefix and
 *   inherited by everything it starts) and no background process's mark (a
 *   `process`/`exec_command` PTY waits for keys by design);
 * - its stdin is its controlling terminal and it is in that terminal's
 *   foreground group, or its stdin is the same file as its own stdout or
 *   stderr (vi with no terminal takes its input from stderr);
 * - it sleeps in a wait for input (read, select, poll: its wchan), and when
 *   /proc/PID/syscall can be read, the call is a read of fd 0, or a select or
 *   poll on at least one descriptor (a select with none is a sleep);
 * - nothing else it could be waiting for is open: every other descriptor it
 *   can read from is that terminal, that same file, a regular file or
 *   /dev/null (not a socket, a pipe, an eventfd or another device).
 *
 * A program that reads its given stdin, a pipe from a slow producer, a
 * `sleep`, a `wait` for a child, or a network client are none of these.
 */

import { randomBytes } from "node:crypto";

/** A process the probe found waiting on a terminal. */
export interface StuckProcess {
  pid: number;
  /** Its start time (clock ticks since boot): the same pid in a later probe is the same process only with it. */
  start: number;
  name: string;
}

const PREFIX = "__sw_stuck";

/**
 * The variable that tags a foreground call's processes. Read-only, so the
 * session's snapshot leaves it out (state-dump.ts keeps no read-only
 * SHELLWRIGHT_* name): the next call does not inherit it.
 */
export const TAG_VARIABLE = "SHELLWRIGHT_TERMINAL_CALL";

export function newTag(): string {
  return randomBytes(8).toString("hex");
}

/** The command with its tag set first, on its first line (the command's line numbers stay as they were). */
export function taggedCommand(command: string, tag: string): string {
  return `builtin declare -rx ${TAG_VARIABLE}=${tag}; ${command}`;
}

/** Kernel functions a process sleeps in while it waits for input (blocking read, select, poll). */
const INPUT_WAITS = [
  "wait_woken",
  "n_tty_read*",
  "tty_read*",
  "poll_schedule_timeout*",
  "do_select*",
  "core_sys_select*",
  "do_sys_poll*",
  "unix_stream_data_wait*",
  "unix_stream_read_generic*",
  "sk_wait_data*",
  "pipe_read*",
  "anon_pipe_read*",
].join("|");

/** The bash probe for the processes of the call tagged `tag` (a value of newTag()). */
export function stuckInputProbe(tag: string): string {
  if (!/^[0-9a-f]{16}$/.test(tag)) throw new Error(`not a call tag: ${tag}`);
  return `set +e
tag=${TAG_VARIABLE}=${tag}
case $HOSTTYPE in
  x86_64) reads=" 0 19 " polls=" 7 23 270 271 " ;;
  aarch64|arm64) reads=" 63 65 " polls=" 72 73 " ;;
  *) reads= polls= ;;
esac
NL=$'\\n'
# The syscall it sleeps in, where /proc shows it (not under Yama's ptrace_scope 1): a read of fd 0, or a select
# or poll on at least one descriptor. Where it cannot be read, the wchan alone decides.
waiting() {
  local s
  s=; { IFS= read -r s < "$1/syscall"; } 2>/dev/null; [[ -n $s ]] || return 0
  set -- $s
  [[ $1 =~ ^[0-9]+$ ]] || return 1
  [[ -n $reads$polls ]] || return 0
  if [[ $reads == *" $1 "* ]]; then (( $2 == 0 )); return; fi
  [[ $polls == *" $1 "* ]] || return 1
  case $1 in 7|271|73) (( $3 > 0 ));; *) (( $2 > 0 ));; esac
}
# Its environment, one entry a line, between newlines.
environment() {
  local IFS=$NL e
  mapfile -d '' -t e < "$1/environ" 2>/dev/null || return 1
  env="$NL\${e[*]}$NL"
}
for f in /proc/[0-9]*; do
  p=\${f#/proc/}
  [[ $p == "$$" || $p == "$BASHPID" ]] && continue
  { IFS= read -r line < "$f/stat"; } 2>/dev/null || continue
  name=\${line#*(}; name=\${name%)*}
  set -- \${line##*) }
  [[ $1 == S ]] || continue
  start=\${20}
  fd0=$f/fd/0 dev=
  if (( $5 != 0 )) && [[ $6 == "$3" ]]; then
    maj=$((($5 >> 8) & 0xfff)) min=$((($5 & 0xff) | (($5 >> 12) & 0xfff00)))
    if ((maj >= 136 && maj <= 143)); then dev=/dev/pts/$(((maj - 136) * 256 + min))
    elif ((maj == 4)); then dev=/dev/tty$min
    elif ((maj == 5 && min == 1)); then dev=/dev/console; fi
    [[ -n $dev && $fd0 -ef $dev ]] || dev=
  fi
  [[ -n $dev || ( ! -c $fd0 && ( $fd0 -ef $f/fd/1 || $fd0 -ef $f/fd/2 ) ) ]] || continue
  # No newline at its end: read fails, and still sets w.
  w=; { IFS= read -r w < "$f/wchan"; } 2>/dev/null; [[ -n $w ]] || continue
  case $w in ${INPUT_WAITS}) ;; *) continue ;; esac
  environment "$f" || continue
  [[ $env == *"$NL$tag$NL"* && $env != *"\${NL}SHELLWRIGHT_BG_ID="* ]] || continue
  waiting "$f" || continue
  ok=1
  for g in "$f"/fd/*; do
    n=\${g##*/}
    [[ $n == 0 || -f $g || -d $g || $g -ef $fd0 || $g -ef /dev/null ]] && continue
    [[ -n $dev && $g -ef $dev ]] && continue
    fl=
    while IFS=$' \\t' read -r k v; do [[ $k == flags: ]] && { fl=$v; break; }; done < "$f/fdinfo/$n" 2>/dev/null
    [[ -n $fl ]] && (((8#$fl & 3) == 1)) && continue
    ok=0; break
  done
  ((ok)) && printf '${PREFIX} %s %s %s\\n' "$p" "$start" "$name"
done
exit 0
`;
}

export function parseStuck(output: string): StuckProcess[] {
  const found: StuckProcess[] = [];
  for (const line of output.split("\n")) {
    const match = new RegExp(`^${PREFIX} (\\d+) (\\d+) (.*)$`).exec(line);
    if (match !== null) found.push({ pid: Number(match[1]), start: Number(match[2]), name: match[3]! });
  }
  return found;
}

/** The output's last line after such a stop (in place of the interrupt's). */
export const STUCK_NOTICE = "[Command stopped: it was waiting for terminal input]";

/** What a stuck call's result says. */
export function stuckInputAdvice(stuck: StuckProcess, quietMs: number): string {
  return (
    `\`${stuck.name}\` (pid ${stuck.pid}) was waiting for input on a terminal that nothing here types into ` +
    `(an editor, a REPL, a prompt). After ${Math.round(quietMs / 1000)}s without output the command was stopped, ` +
    "with everything it started, as a timeout would. For an interactive program, use " +
    'terminal(command=..., background=true, pty=true) and type with process(action="submit"|"keys"); ' +
    'otherwise its non-interactive form: git commit -m "message" (or -F file, --no-edit), python3 -c "..." or a ' +
    "script file, input on stdin (printf 'y\\n' | cmd), or a --yes / --batch / --non-interactive flag."
  );
}

export interface StuckInputWatch {
  /** Runs an isolated probe in the session (Environment.execute with `isolated`). */
  probe(script: string): Promise<string>;
  /** The call's tag (taggedCommand). */
  tag: string;
  /** When the call last printed (Date.now()). */
  lastOutputAt(): number;
  /** Output-free time before the first probe. */
  quietMs: number;
  /** Called once, with the process seen stuck by two probes in a row. */
  onStuck(stuck: StuckProcess): void;
}

/** After a sighting, the next probe (to see it again); without one, the wait doubles from this up to the cap. */
const REPEAT_MS = 1000;
const BACKOFF_CAP_MS = 30_000;

/**
 * Probes a call once it has been quiet for `quietMs`, one probe at a time: again after a second when a probe
 * found something, and less and less often while probes find nothing and the call stays quiet (a silent build
 * of ten minutes costs about 25 probes). A process seen by two probes in a row, with no output between them,
 * is reported (one sighting may be a program that reads its terminal between two bursts of work). Returns the
 * stop function.
 */
export function watchForStuckInput(watch: StuckInputWatch): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let seen = new Map<string, StuckProcess>();
  let seenAt = 0;
  let backoff = REPEAT_MS;
  let quietSince = watch.lastOutputAt();
  const schedule = (ms: number): void => {
    timer = setTimeout(tick, Math.max(0, ms));
    timer.unref();
  };
  const tick = (): void => {
    if (stopped) return;
    const last = watch.lastOutputAt();
    if (last !== quietSince) {
      // It printed: start over.
      quietSince = last;
      backoff = REPEAT_MS;
      seen = new Map();
    }
    const quietFor = Date.now() - last;
    if (quietFor < watch.quietMs) return schedule(watch.quietMs - quietFor);
    const asked = Date.now();
    void watch
      .probe(stuckInputProbe(watch.tag))
      .catch(() => "")
      .then((output) => {
        if (stopped) return;
        const found = new Map(parseStuck(output).map((p) => [`${p.pid}:${p.start}`, p]));
        const again = [...found].find(([key]) => seen.has(key) && seenAt > watch.lastOutputAt());
        if (again !== undefined) {
          stopped = true;
          watch.onStuck(again[1]);
          return;
        }
        seen = found;
        seenAt = asked;
        if (found.size > 0) return schedule(REPEAT_MS);
        schedule(backoff);
        backoff = Math.min(backoff * 2, BACKOFF_CAP_MS);
      });
  };
  schedule(watch.quietMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
