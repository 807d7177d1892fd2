/**
 * Pure builders for the bash a background process needs. Each runs through
 * `Session.execute`, so it sources the session snapshot like any command and
 * works on every backend; each is one round trip.
 *
 * A background process lives in a directory of its own inside the backend:
 *   log     stdout and stderr, merged (stdout alone when stderr is kept apart)
 *   err     stderr, when it is kept apart (`separateStreams`; same bounded layout)
 *   keep    pids a signal must spare (the bounders: killing one would lose output);
 *           the command can write it too, so signal checks each pid (process-signal.ts)
 *   in      a FIFO for its stdin (when mkfifo works; otherwise /dev/null)
 *   holder  PID of a sleeper that keeps a writer on `in`, so the process sees
 *           EOF only when `close` kills it
 *   exit    the command's real exit code, written by the wrapper when it ends
 *   lock    locked by the wrapper while it lives (flock), so a wait is woken
 *           by its end, not by a poll (waitLoop)
 *   ctl     (a PTY process only) a FIFO of resize requests (pty-scripts.ts)
 *
 * The wrapper is started with job control on (`set -m`), so it leads a process
 * group of its own: its PID is the group id, and `kill -- -PGID` reaches the
 * command and everything it started, except what calls setsid itself: that
 * carries the marker below, by which `kill` finds it.
 * Every process of the tree also carries SHELLWRIGHT_BG_ID=<id> in its
 * environment, so what the command left running after it ended can still be
 * recognised as ours (a group id alone may have been reused).
 */

import { shellQuote } from "../../core/script.js";
import { sweepScript } from "../../core/sweep-script.js";
import { ptyCommandLine, type PtyLaunch } from "./pty-scripts.js";
import { BOUND_FUNCTIONS, boundWrapper, LOG_READ_FUNCTIONS, logLayout } from "./log-bound.js";

export interface ProcessFiles {
  dir: string;
  log: string;
  input: string;
  holder: string;
  exit: string;
  ctl: string;
  lock: string;
  err: string;
  keep: string;
}

export function processFiles(dir: string): ProcessFiles {
  return {
    dir,
    log: `${dir}/log`,
    input: `${dir}/in`,
    holder: `${dir}/holder`,
    exit: `${dir}/exit`,
    ctl: `${dir}/ctl`,
    lock: `${dir}/lock`,
    err: `${dir}/err`,
    keep: `${dir}/keep`,
  };
}

export const MARKER_VARIABLE = "SHELLWRIGHT_BG_ID";

export interface LaunchOptions {
  maxLogBytes: number;
  pty?: PtyLaunch | undefined;
  /** Stderr to `err` (bounded like the log, by its own bounder), stdout alone to `log`. Not with `pty`. */
  separateStreams?: boolean | undefined;
  /**
   * Variables exported to the command (names checked by the caller). Their values are not in the script: the
   * launch reads them from its stdin, each ended by a NUL (launchInput), so none is on a command line.
   */
  envNames?: readonly string[] | undefined;
}

/** The launch's stdin for `envNames`' values, in order. */
export function launchInput(values: readonly string[]): string {
  return values.map((value) => `${value}\0`).join("");
}

/**
 * Prints the wrapper's PID (= its process group id) as the last line. With
 * `pty`, the command runs under the helper's pseudo-terminal (its stdin
 * FIFO relayed to the terminal, the terminal's output to the log).
 */
export function launchScript(files: ProcessFiles, command: string, id: string, options: LaunchOptions): string {
  const pty = options.pty;
  const apart = options.separateStreams === true && pty === undefined;
  const names = options.envNames ?? [];
  const bound = boundWrapper(shellQuote(files.dir));
  const layout = logLayout(options.maxLogBytes);
  const q = {
    dir: shellQuote(files.dir),
    log: shellQuote(files.log),
    input: shellQuote(files.input),
    holder: shellQuote(files.holder),
    exit: shellQuote(files.exit),
  };
  // The wrapper traps TERM (and INT, interrupt.ts) with a no-op so that, when
  // the group is told to stop, it outlives the command long enough to record
  // its real exit code.
  // The command runs in a subshell of its own: an `exit` in it must end the
  // command, not the wrapper.
  const wrapper = [
    "builtin trap : TERM INT",
    `builtin export ${MARKER_VARIABLE}=${shellQuote(id)}`,
    // The wrapper's fd 9 holds the lock until the wrapper is gone: nothing it starts keeps fd 9. The lock file
    // gets its name only once it is held, so a wait that finds it never takes it before the wrapper did.
    `exec 9> ${shellQuote(files.lock)}.tmp && { command flock -x 9 && command mv -f ${shellQuote(files.lock)}.tmp ${shellQuote(files.lock)} || exec 9>&-; } 2>/dev/null`,
    ...names.map((name, i) => `builtin export ${name}="$__sw_v${i}"; builtin unset -v __sw_v${i}`),
    bound.before,
    // The command's stdin is opened here, before the holder is published (a write or a close may come from then
    // on), not by the command's own redirection later: a FIFO's bytes live only while one of its ends is open, and
    // a read-only open waits for a writer. Opened later, a write taken before it and then the close (the holder
    // gone) left the command's open waiting for a writer forever, the write lost with the pipe.
    `if [[ $__sw_in != /dev/null ]]; then exec 3<>"$__sw_in" {__sw_fd}<"$__sw_in"; command sleep 2147483647 >&3 3>&- 9>&- {__sw_fd}<&- </dev/null 2>/dev/null & builtin echo $! > ${q.holder}.tmp && command mv -f ${q.holder}.tmp ${q.holder}; exec 3>&-; else exec {__sw_fd}</dev/null; fi`,
    // The command's stderr reaches the log through fd 3; the wrapper's own is
    // /dev/null while it waits, so bash's report of a command killed by a
    // signal ("Terminated") is not taken for the command's output.
    ...(apart ? [stderrApart(shellQuote(files.dir))] : []),
    `builtin echo "\${__SW_BOUND_PID-} \${__sw_ep-}" > ${shellQuote(files.keep)}`,
    pty === undefined
      ? `{ ( builtin eval -- ${shellQuote(command)} ) <&"$__sw_fd" {__sw_fd}<&- 2>&3 3>&- 9>&-; } 3>&${apart ? '"$__sw_e" {__sw_e}>&-' : "2"} 2>/dev/null`
      : `{ ${ptyCommandLine({ ...pty, ctl: files.ctl }, command)} <&"$__sw_fd" {__sw_fd}<&- 2>&3 3>&- 9>&-; } 3>&2 2>/dev/null`,
    "__sw_rc=$?",
    "exec {__sw_fd}<&-",
    ...(apart ? ["exec {__sw_e}>&-"] : []),
    `[[ -s ${q.holder} ]] && { builtin kill "$(< ${q.holder})" 2>/dev/null; : > ${q.holder}; }`,
    bound.after,
    `builtin echo $__sw_rc > ${q.exit}.tmp && command mv -f ${q.exit}.tmp ${q.exit}`,
  ].join("\n");
  return [
    // The variables' values, from stdin (before anything else reads it).
    ...names.map((_, i) => `IFS= builtin read -r -d '' __sw_v${i} || builtin exit 1`),
    `(builtin umask 077 && command mkdir -p ${q.dir}) || builtin exit 1`,
    ...(apart ? [`: > ${shellQuote(files.err)}`] : []),
    `command mkfifo -m 600 ${q.input} 2>/dev/null && __sw_in=${q.input} || __sw_in=/dev/null`,
    ...(pty === undefined
      ? []
      : [
          `command mkfifo -m 600 ${shellQuote(files.ctl)} && [[ $__sw_in != /dev/null ]] || { builtin echo 'a terminal needs FIFOs (mkfifo failed)'; builtin exit 1; }`,
        ]),
    // The wrapper writes the log itself where the log can be bounded (log-bound.ts).
    BOUND_FUNCTIONS,
    `__sw_bounding && builtin printf '%d %d\\n' ${layout.headBytes} ${layout.segmentBytes} > ${q.dir}/bound && __sw_out=/dev/null || __sw_out=${q.log}`,
    "builtin set -m",
    `(\n${wrapper}\n) > "$__sw_out" 2>&1 &`,
    'builtin echo "$!"',
  ].join("\n");
}

/**
 * The wrapper's stderr sink for a command whose stderr is kept apart, on fd `$__sw_e`: a second bounder writing
 * `err` where the log is bounded (a process substitution whose stdout is the first bounder's pipe, so the wrapper's
 * drain waits for both), else `err` itself. Its pid (`$__sw_ep`) goes to `keep` with the log's bounder's.
 */
function stderrApart(dir: string): string {
  return [
    "if [[ -n ${__sw_r-} ]]; then",
    `  exec {__sw_e}> >(exec 2>/dev/null 9>&- {__sw_fd}<&-; builtin trap '' TERM INT HUP; __sw_bound ${dir} "$__sw_h" "$__sw_s" err)`,
    "  __sw_ep=$!",
    `else exec {__sw_e}>> ${dir}/err; fi`,
  ].join("\n");
}

/** What the backend reports about one process, and its new output. */
export interface PollRequest {
  /** Index echoed back, to match the answer to the request. */
  index: number;
  files: ProcessFiles;
  pgid: number;
  /** Bytes of the log already read. */
  offset: number;
  /** Read at most this many new bytes (the last ones, when more were written). */
  maxBytes: number;
}

const POLL_FUNCTION = [
  // Args: index dir-of-files pgid offset maxBytes. Prints a header line and the
  // new log bytes as base64 (never ambiguous, and byte-exact).
  "__sw_poll() {",
  "  local i=$1 d=$2 p=$3 off=$4 cap=$5 rc= st=gone s= pg=",
  '  [[ -f $d/exit ]] && builtin read -r rc < "$d/exit"',
  "  if [[ -z $rc ]]; then",
  // The wrapper is alive if its /proc entry is not a zombie and still leads
  // our group (a reused PID would lead another); without /proc, kill -0.
  '    if [[ -r /proc/$p/stat ]]; then builtin read -r _ _ s _ pg _ < "/proc/$p/stat" 2>/dev/null && [[ $s != Z && $pg == "$p" ]] && st=running',
  '    elif [[ ! -d /proc/self ]]; then builtin kill -0 "$p" 2>/dev/null && st=running; fi',
  '    [[ $st == gone && -f $d/exit ]] && builtin read -r rc < "$d/exit"',
  "  fi",
  "  [[ -n $rc ]] && st=exited",
  '  __sw_logspan "$d" "$off" "$cap"',
  '  builtin printf \'__SW_PROC %s %s %s %s %s\\n\' "$i" "$st" "${rc:--}" "$__sw_size" "$__sw_start"',
  '  (( __sw_size > __sw_start )) && __sw_logcat "$d" | command base64',
  "  builtin echo",
  "}",
].join("\n");

/** One round trip that reports on every process in `requests`. */
export function pollScript(requests: readonly PollRequest[]): string {
  const calls = requests.map(
    (r) => `__sw_poll ${r.index} ${shellQuote(r.files.dir)} ${r.pgid} ${r.offset} ${r.maxBytes}`,
  );
  return [LOG_READ_FUNCTIONS, POLL_FUNCTION, ...calls].join("\n");
}

export interface PollAnswer {
  index: number;
  running: boolean;
  /** From the exit file; undefined when the wrapper ended without writing one (it was killed). */
  exitCode: number | undefined;
  /** Size of the log when polled. */
  size: number;
  /** Offset of the first byte in `data`. */
  start: number;
  data: Uint8Array;
}

export function parsePollOutput(text: string): PollAnswer[] {
  const answers: PollAnswer[] = [];
  let current: { answer: PollAnswer; base64: string[] } | undefined;
  const flush = (): void => {
    if (!current) return;
    current.answer.data = Buffer.from(current.base64.join(""), "base64");
    answers.push(current.answer);
    current = undefined;
  };
  for (const line of text.split("\n")) {
    const header = /^__SW_PROC (\d+) (running|gone|exited) (-?\d+|-) (\d+) (\d+)$/.exec(line);
    if (header) {
      flush();
      const [, index, state, rc, size, start] = header;
      current = {
        answer: {
          index: Number(index),
          running: state === "running",
          exitCode: rc === "-" ? undefined : Number(rc),
          size: Number(size),
          start: Number(start),
          data: new Uint8Array(),
        },
        base64: [],
      };
    } else if (current && /^[A-Za-z0-9+/=]+$/.test(line)) {
      current.base64.push(line);
    }
  }
  flush();
  return answers;
}

/** flock's exit code when its wait timed out (-E). */
const FLOCK_TIMEOUT = 97;

/**
 * Waits until the process ends, or `maxChecks` checks have passed. Woken by
 * the end itself where flock(1) is: the wrapper holds the lock while it lives,
 * and the kernel hands it over the moment the wrapper is gone, however busy
 * the machine is. Without flock (or when the wait began before the wrapper
 * took the lock), the checks every `intervalMs` find the end.
 */
function waitLoop(request: PollRequest, intervalMs: number, maxChecks: number | undefined): string {
  const d = shellQuote(request.files.dir);
  const p = request.pgid;
  const alive = `{ { [[ -r /proc/${p}/stat ]] && builtin read -r _ _ __sw_s _ __sw_pg _ < /proc/${p}/stat 2>/dev/null && [[ $__sw_s != Z && $__sw_pg == ${p} ]]; } || { [[ ! -d /proc/self ]] && builtin kill -0 ${p} 2>/dev/null; }; }`;
  const seconds = (Math.max(intervalMs, 10) / 1000).toFixed(3);
  const bound = maxChecks === undefined ? "" : ` && (( __sw_n++ < ${maxChecks} ))`;
  const timeout = maxChecks === undefined ? "" : ` -w ${((Math.max(intervalMs, 10) * maxChecks) / 1000).toFixed(3)}`;
  const lock = shellQuote(request.files.lock);
  const lookups = Math.min(250, maxChecks === undefined ? 250 : Math.ceil((Math.max(intervalMs, 10) * maxChecks) / 20));
  // flock's -E code tells its timeout from a flock without -w or -E (busybox), which falls back to the checks.
  return [
    // A wait that starts before the wrapper holds its lock (a busy machine) looks for it a little (5 s at most,
    // never past the wait's own bound) instead of falling back to the checks at once.
    `for ((__sw_i = 0; __sw_i < ${lookups}; __sw_i++)); do [[ ! -f ${d}/exit && ! -f ${lock} ]] && ${alive} || break; command sleep 0.02; done`,
    `__sw_f=0; [[ ! -f ${d}/exit && -f ${lock} ]] && ${alive} && { command flock -s -E ${FLOCK_TIMEOUT}${timeout} ${lock} true 2>/dev/null; __sw_f=$?; }`,
    `__sw_n=0\n[[ $__sw_f == ${FLOCK_TIMEOUT} ]] || while [[ ! -f ${d}/exit ]] && ${alive}${bound}; do command sleep ${seconds} 2>/dev/null || command sleep 1; done`,
  ].join("\n");
}

/** Blocks until the process ends (or `maxChecks` checks pass), then polls it: still one round trip. */
export function waitScript(request: PollRequest, intervalMs: number, maxChecks: number | undefined): string {
  return `${waitLoop(request, intervalMs, maxChecks)}\n${pollScript([request])}`;
}

/**
 * Ends the process and everything it started, then polls it. Where /proc
 * exists that is the backends' one sweep (sweep-script.ts), whose targets are
 * the group and every process carrying the process's mark: so a child that
 * left the group or the PTY's session with setsid() is reached too. TERM to
 * all of them, up to `graceMs` for them to go (the wrapper records the
 * command's exit code meanwhile), then KILL. Without /proc, TERM and KILL to
 * the group only. The sweep runs in a bash of its own: it ends with `exit`.
 */
export function killScript(request: PollRequest, id: string, graceMs: number): string {
  const p = request.pgid;
  const checks = Math.max(1, Math.ceil(graceMs / 50));
  const sweep = sweepScript({ marks: [`${MARKER_VARIABLE}=${id}`], groups: [p] }, "TERM", graceMs);
  return [
    `if [[ -d /proc/self ]]; then "$BASH" -c ${shellQuote(sweep)} >/dev/null 2>&1 </dev/null`,
    `else builtin kill -TERM -- -${p} 2>/dev/null`,
    waitLoop(request, 50, checks),
    `builtin kill -KILL -- -${p} 2>/dev/null; fi`,
    pollScript([request]),
  ].join("\n");
}

/**
 * Waits (5 s at most) for the wrapper to write the holder's PID (whole, by a
 * rename): the launch
 * returns once the wrapper is started, not once it has run its first line, so
 * a write right after the start can come first. An absent holder file is "not
 * yet"; an empty one is "closed" (closeStdinScript, the wrapper's end).
 */
function awaitHolder(files: ProcessFiles): string {
  const input = shellQuote(files.input);
  const holder = shellQuote(files.holder);
  return `for ((__sw_i = 0; __sw_i < 250; __sw_i++)); do [[ -p ${input} && ! -e ${holder} ]] || break; command sleep 0.02; done`;
}

/** Appends data to the process's stdin FIFO; the data arrives on the call's stdin, never in the script. */
export function writeStdinScript(files: ProcessFiles): string {
  return `${awaitHolder(files)}\n[[ -p ${shellQuote(files.input)} && -s ${shellQuote(files.holder)} ]] || { builtin echo 'stdin closed'; builtin exit 3; }\ncommand cat > ${shellQuote(files.input)}`;
}

/** Ends the writer that keeps the FIFO open: the process reads EOF after what is buffered. */
export function closeStdinScript(files: ProcessFiles): string {
  const holder = shellQuote(files.holder);
  return `${awaitHolder(files)}\n[[ -s ${holder} ]] || builtin exit 3\nbuiltin kill "$(< ${holder})" 2>/dev/null; : > ${holder}`;
}

export interface ReapEntry {
  id: string;
  pgid: number;
  files: ProcessFiles;
  /** Still running at the last look: without /proc its group is killed unverified. */
  running: boolean;
}

// Args: pgid:id pairs. Kills each group that still has a member carrying its
// marker, and prints how many it killed. Reads /proc with builtins only.
const REAP_FUNCTION = [
  "__sw_reap() {",
  "  local -A want=()",
  "  local pair f line rest pid pg n=0",
  "  for pair; do want[${pair%%:*}]=${pair#*:}; done",
  "  for f in /proc/[0-9]*/stat; do",
  '    builtin read -r line < "$f" 2>/dev/null || continue',
  "    rest=${line##*) }",
  "    builtin set -f; builtin set -- $rest; builtin set +f",
  "    pg=$3",
  "    [[ -n $pg && -n ${want[$pg]+x} ]] || continue",
  "    pid=${f#/proc/}; pid=${pid%/stat}",
  `    if command grep -qaF "${MARKER_VARIABLE}=\${want[$pg]}" "/proc/$pid/environ" 2>/dev/null; then`,
  '      builtin kill -KILL -- "-$pg" 2>/dev/null && n=$((n + 1))',
  '      builtin unset "want[$pg]"',
  "    fi",
  "  done",
  '  builtin echo "__SW_REAPED $n"',
  "}",
].join("\n");

/**
 * Kills what is left of the listed processes' trees, recognised by their
 * marker, and prints `__SW_REAPED <groups killed>`. Without /proc only the
 * groups of processes still running are killed. With `removeFiles`, their
 * directories go too (the session is closing).
 */
export function reapScript(entries: readonly ReapEntry[], options: { removeFiles: boolean }): string {
  const pairs = entries.map((entry) => `${entry.pgid}:${entry.id}`).join(" ");
  const unverified = entries
    .filter((entry) => entry.running)
    .map((entry) => `builtin kill -KILL -- -${entry.pgid} 2>/dev/null;`);
  const lines = [
    REAP_FUNCTION,
    `if [[ -d /proc/self ]]; then __sw_reap ${pairs}; else ${unverified.join(" ")} builtin echo "__SW_REAPED ${unverified.length}"; fi`,
  ];
  if (options.removeFiles && entries.length > 0)
    lines.push(`command rm -rf -- ${entries.map((entry) => shellQuote(entry.files.dir)).join(" ")}`);
  lines.push("builtin true");
  return lines.join("\n");
}

export const parseReaped = (text: string): number => Number(/__SW_REAPED (\d+)/.exec(text)?.[1] ?? 0);
