/**
 * The probe that tells whether a quiet foreground call is stuck waiting for
 * keys on a terminal nobody types into (stuck-input.ts runs it): bash over
 * /proc, run as an isolated call of the same session, so it runs where the
 * program runs, on every backend.
 *
 * A process is taken as waiting on a terminal when all of these hold:
 *
 * - it carries the call's mark (SHELLWRIGHT_CALL, which everything the call
 *   starts inherits) and no background process's mark;
 * - its stdin is its controlling terminal and it is in that terminal's
 *   foreground group, or its stdin is the same file as its own stdout or
 *   stderr (vi with no terminal takes its input from stderr);
 * - it sleeps in a wait for input (read, select, poll: its wchan), and when
 *   /proc/PID/syscall can be read, that is a read of fd 0, or a select or
 *   poll on at least one descriptor (a select on none is a sleep);
 * - nothing else it could be waiting for is open: every other descriptor it
 *   can read from is that terminal, that same file, a regular file or
 *   /dev/null (not a socket, a pipe, an eventfd or another device).
 *
 * And the call is stuck only when each of its other processes waits for
 * nothing but that: for a child (`wait`), on a pipe, or relaying between
 * pipes and terminals (`script`, `tee`). One that runs, sleeps on a timer
 * (`script -qc python3 & sleep 10`) or waits on a socket means the call is
 * still doing something.
 *
 * A probe is one look, and a call that keeps starting short commands (a
 * loop of `sleep 0.2` beside a waiting program) can look idle in it: the
 * probe also prints the call's activity (each process's pid, start time and
 * minor faults, and those of each one's parent in its session, the call's
 * shell included:
 * a fork raises them in the parent, a sleeping process never does), and two
 * sightings count only when it did not change between them.
 */

export interface StuckProcess {
  pid: number;
  /** Its start time (clock ticks since boot): the same pid in a later probe is the same process only with it. */
  start: number;
  name: string;
}

const PREFIX = "__sw_stuck";
const ACTIVITY = "__sw_activity";

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

/** The waits of the call's other processes that do not keep it busy. */
const IDLE_WAITS = "do_wait*|kernel_wait4*|pipe_read*|anon_pipe_read*|wait_woken";
const RELAY_WAITS = "poll_schedule_timeout*|do_select*|core_sys_select*|do_sys_poll*";

/** The bash probe for the call whose mark is `mark` (the SHELLWRIGHT_CALL value its command reported). */
export function stuckInputProbe(mark: string): string {
  if (!/^[A-Za-z0-9_-]{12}$/.test(mark)) throw new Error(`not a call mark: ${mark}`);
  return `set +e
tag=SHELLWRIGHT_CALL=${mark}
NL=$'\\n'
case $HOSTTYPE in
  x86_64) reads=" 0 19 " polls=" 7 23 270 271 " ;;
  aarch64|arm64) reads=" 63 65 " polls=" 72 73 " ;;
  *) reads= polls= ;;
esac
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
  # 2>/dev/null first: a process that is gone, or not ours to read, says nothing.
  mapfile -d '' -t e 2>/dev/null < "$1/environ" || return 1
  env="$NL\${e[*]}$NL"
}
# No newline at the end of wchan: read fails, and still sets w.
wchan() { w=; { IFS= read -r w < "$1/wchan"; } 2>/dev/null; [[ -n $w ]]; }
# Every descriptor it could read from, other than 0, 1 and 2, is one of: a regular file, a directory, /dev/null,
# the same file as 0, 1 or 2, its terminal ($2); with $3 (a relay), also a pipe, a pty or an eventfd/signalfd.
quiet_fds() {
  local g n fl k v
  for g in "$1"/fd/*; do
    n=\${g##*/}
    # 1 and 2 are outputs; a socket or pipe that is also one of them is the call's output too.
    [[ $n == [012] || -f $g || -d $g || $g -ef /dev/null || $g -ef $1/fd/0 || $g -ef $1/fd/1 || $g -ef $1/fd/2 ]] && continue
    [[ -n $2 && $g -ef $2 ]] && continue
    fl=
    while IFS=$' \\t' read -r k v; do [[ $k == flags: ]] && { fl=$v; break; }; done < "$1/fdinfo/$n" 2>/dev/null
    [[ -n $fl ]] && (((8#$fl & 3) == 1)) && continue
    [[ -n $3 && ! -S $g ]] && continue
    return 1
  done
  return 0
}
# The parent's pid, start and minor faults, when it is in the same session ($2): the call's own shell carries no
# mark in /proc (it sets it after its exec), yet it forks every command it runs; what started the call (Node,
# the launcher) is in another session and busy with other things.
parent_activity() {
  local l pp=$1 sid=$2
  { IFS= read -r l < "/proc/$pp/stat"; } 2>/dev/null || return 0
  set -- \${l##*) }
  [[ $4 == "$sid" ]] && act+=" ^$pp:\${20}:$8"
}
found=(); declare -A cand=(); act=
for f in /proc/[0-9]*; do
  p=\${f#/proc/}
  [[ $p == "$$" || $p == "$BASHPID" ]] && continue
  { IFS= read -r line < "$f/stat"; } 2>/dev/null || continue
  name=\${line#*(}; name=\${name%)*}
  set -- \${line##*) }
  [[ $1 == S ]] || continue
  start=\${20} fd0=$f/fd/0 dev=
  if (( $5 != 0 )) && [[ $6 == "$3" ]]; then
    maj=$((($5 >> 8) & 0xfff)) min=$((($5 & 0xff) | (($5 >> 12) & 0xfff00)))
    if ((maj >= 136 && maj <= 143)); then dev=/dev/pts/$(((maj - 136) * 256 + min))
    elif ((maj == 4)); then dev=/dev/tty$min
    elif ((maj == 5 && min == 1)); then dev=/dev/console; fi
    [[ -n $dev && $fd0 -ef $dev ]] || dev=
  fi
  [[ -n $dev || ( ! -c $fd0 && ( $fd0 -ef $f/fd/1 || $fd0 -ef $f/fd/2 ) ) ]] || continue
  wchan "$f" || continue
  case $w in ${INPUT_WAITS}) ;; *) continue ;; esac
  environment "$f" || continue
  [[ $env == *"$NL$tag$NL"* && $env != *"\${NL}SHELLWRIGHT_BG_ID="* ]] || continue
  waiting "$f" && quiet_fds "$f" "$dev" || continue
  found+=("$p $start $name") cand[$p]=1 act+=" $p:$start:$8"
  parent_activity "$2" "$4"
done
((\${#found[@]})) || exit 0
# The call's other processes: each must wait for nothing but this.
for f in /proc/[0-9]*; do
  p=\${f#/proc/}
  [[ $p == "$$" || $p == "$BASHPID" ]] && continue
  [[ -n \${cand[$p]} ]] && continue
  environment "$f" && [[ $env == *"$NL$tag$NL"* ]] || continue
  { IFS= read -r line < "$f/stat"; } 2>/dev/null || continue
  set -- \${line##*) }
  act+=" $p:\${20}:$8"
  parent_activity "$2" "$4"
  [[ $1 == [ZXT] ]] && continue
  [[ $1 == S ]] && wchan "$f" || exit 0
  case $w in
    ${IDLE_WAITS}) ;;
    ${RELAY_WAITS}) quiet_fds "$f" "" relay || exit 0 ;;
    *) exit 0 ;;
  esac
done
for e in "\${found[@]}"; do printf '${PREFIX} %s\\n' "$e"; done
printf '${ACTIVITY} %s\\n' "$act"
exit 0
`;
}

/** The call's activity as the probe saw it: equal in two probes only if none of its processes did anything between. */
export function parseActivity(output: string): string {
  return new RegExp(`^${ACTIVITY} (.*)$`, "m").exec(output)?.[1] ?? "";
}

export function parseStuck(output: string): StuckProcess[] {
  const found: StuckProcess[] = [];
  for (const line of output.split("\n")) {
    const match = new RegExp(`^${PREFIX} (\\d+) (\\d+) (.*)$`).exec(line);
    if (match !== null) found.push({ pid: Number(match[1]), start: Number(match[2]), name: match[3]! });
  }
  return found;
}
