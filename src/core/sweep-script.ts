/**
 * The one kill every backend runs where the processes are (bash plus /proc,
 * nothing else: no ps, pkill or grep): it finds every process a call (or a
 * whole session) started, however it detached, and kills it.
 *
 * A process is a target when its initial environment (/proc/PID/environ)
 * holds one of the marks (src/core/call-marks.ts), when it is the wrapper,
 * in one of the given process groups or sessions, a remembered PID (same
 * start time, so never a reused one), or a child of a target. A wrapper
 * given with its start time that now has another one is a newcomer on a
 * reused PID (this machine's PIDs wrap within minutes under load): neither
 * it nor the group and session its PID names are targets. Targets are
 * frozen with SIGSTOP as they are found, and the /proc walk repeats until two
 * walks in a row find nothing new: a forker or a PID hopper cannot outrun it.
 * Then TERM, a grace period, and KILL for what is left; the script returns
 * once everything it hit is gone and says how many survived.
 *
 * What it cannot see: a process that cleared its environment (`env -i`,
 * `exec -c`) and also left the call's session and its parent (setsid plus a
 * double fork). Those are left to a cgroup where the backend has one.
 */

import type { KillSignal } from "./transport.js";
import { CALL_MARK, SESSION_MARK } from "./call-marks.js";

export interface SweepTarget {
  /** `NAME=value` environment entries that make a process a target. */
  marks: readonly string[];
  /** The call's wrapper bash. */
  root?: number | undefined;
  /** The wrapper's start time (`/proc/PID/stat` field 22), where known: a PID that has another is not the wrapper. */
  rootStartTime?: string | undefined;
  /** How the wrapper is signalled first: the call's signal, or KILL (a wrapper that must not run its EXIT trap). */
  rootSignal?: KillSignal | undefined;
  /** Process groups whose members are targets. */
  groups?: readonly number[] | undefined;
  /** Sessions (by leader PID) whose members are targets. */
  sessions?: readonly number[] | undefined;
  /** Processes hit by an earlier round, as `pid:starttime`. */
  remembered?: readonly string[] | undefined;
  /**
   * Take a group or session only while its leader is gone (for leaders
   * remembered from finished calls): a live process with that PID is then a
   * newcomer, since Linux never reuses a PID that still names a group or session.
   */
  deadLeadersOnly?: boolean | undefined;
}

const KILLED_PREFIX = "__shellwright_killed:";
const LEFT_PREFIX = "__shellwright_left:";

const ids = (list: readonly number[] | undefined): string =>
  (list ?? []).filter((n) => Number.isInteger(n) && n > 1).join(" ");

const safeMark = (mark: string): boolean => /^[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9_-]+$/.test(mark);

export function sweepScript(target: SweepTarget, signal: KillSignal, graceMs: number): string {
  const root = target.root !== undefined && Number.isInteger(target.root) && target.root > 1 ? target.root : "";
  const rootStart = root !== "" && /^\d+$/.test(target.rootStartTime ?? "") ? target.rootStartTime! : "";
  const remembered = (target.remembered ?? []).filter((entry) => /^\d+:\d+$/.test(entry));
  const graceTicks = Math.max(1, Math.ceil(graceMs / 10));
  const deadLeaders =
    target.deadLeadersOnly === true
      ? [
          "for l in $groups; do [[ -e /proc/$l ]] && groups=${groups/ $l / }; done",
          "for l in $sessions; do [[ -e /proc/$l ]] && sessions=${sessions/ $l / }; done",
          "",
        ].join("\n")
      : "";
  return `set +e
marks=(${target.marks.filter(safeMark).join(" ")})
root=${root} groups=" ${ids(target.groups)} " sessions=" ${ids(target.sessions)} "
builtin unset -v ${CALL_MARK} ${SESSION_MARK}
declare -A skip=() hit=() clean=() want=()
rootstart=${rootStart}
if [[ -n $rootstart ]] && { IFS= read -r line < "/proc/$root/stat"; } 2>/dev/null; then
  set -- \${line##*) }
  [[ \${20} == "$rootstart" ]] || { groups=\${groups/ $root / }; sessions=\${sessions/ $root / }; root=; }
fi
${deadLeaders}for e in ${remembered.join(" ")}; do want[\${e%%:*}]=\${e#*:}; done
p=$$
while [[ $p =~ ^[0-9]+$ ]] && ((p > 0)) && [[ -z \${skip[$p]} ]]; do
  skip[$p]=1
  { IFS= read -r line < "/proc/$p/stat"; } 2>/dev/null || break
  set -- \${line##*) }; p=$2
done
# A sleep without a fork: read with a timeout from a pipe nobody writes.
exec {nap}<> <(:)
SEP=$'\\n'
fast=0
builtin command -v grep >/dev/null 2>&1 && fast=1
marked() {
  local IFS=$SEP e m
  mapfile -d '' -t e 2>/dev/null < "/proc/$1/environ" || return 1
  e="$SEP\${e[*]}$SEP"
  for m in "\${marks[@]}"; do [[ $e == *"$SEP$m$SEP"* ]] && return 0; done
  return 1
}
# One walk over /proc: new targets get the signals in $sigs; quiet=1 when it
# found no new target and every target is stopped or gone. A PID found clean
# is not read again (clean holds its parent) until its parent becomes a target:
# the walk goes in glob order, not PID order, so a child (10006) can come
# before its parent (9990). After the first walk each PID costs a glob plus
# the new PIDs, fast enough that a PID hopper cannot hide from two walks in a row.
sweep() {
  local f pid line s list=()
  local -A fresh=() listed=()
  quiet=1
  # Fast path where grep exists: it reads every new environ file at C speed
  # and names the marked ones as it goes; each is stopped on the spot.
  if ((fast && \${#marks[@]})); then
    for f in /proc/[0-9]*; do
      pid=\${f#/proc/}
      [[ -n \${skip[$pid]}\${clean[$pid]}\${hit[$pid]} ]] || { list+=("$f/environ"); listed[$pid]=1; }
    done
    if ((\${#list[@]})); then
      while IFS= read -r f; do
        pid=\${f#/proc/}; pid=\${pid%/environ}
        fresh[$pid]=1
        for s in $sigs; do kill -s "$s" "$pid" 2>/dev/null; done
      done < <(exec grep -alszxF --line-buffered "\${marks[@]/#/-e}" -- "\${list[@]}")
    fi
  fi
  for f in /proc/[0-9]*; do
    pid=\${f#/proc/}
    [[ -n \${skip[$pid]} ]] && continue
    [[ -n \${clean[$pid]} && -z \${hit[\${clean[$pid]}]} ]] && continue
    { IFS= read -r line < "$f/stat"; } 2>/dev/null || continue
    set -- \${line##*) }
    [[ $2 == "$$" ]] && continue
    if [[ \${hit[$pid]} == "\${20}" ]]; then
      [[ $1 == [TtZX] ]] || { quiet=0; [[ $sigs == *STOP* ]] && kill -s STOP "$pid" 2>/dev/null; }
      continue
    fi
    [[ $1 == [ZX] ]] && continue
    if [[ -n \${fresh[$pid]} || -n \${hit[$2]} || $pid == "$root" || $groups == *" $3 "* || $sessions == *" $4 "* || ( -n \${want[$pid]} && \${want[$pid]} == "\${20}" ) ]]; then :
    elif [[ -n \${listed[$pid]}\${clean[$pid]} ]]; then clean[$pid]=$2; continue
    elif marked "$pid"; then :
    else clean[$pid]=$2; continue; fi
    hit[$pid]=\${20}; quiet=0
    [[ -n \${fresh[$pid]} ]] && continue
    for s in $sigs; do kill -s "$s" "$pid" 2>/dev/null; done
  done
}
freeze() {
  local r calm=0
  sigs=$1
  for ((r = 0; r < 60; r++)); do
    sweep
    if ((quiet)); then ((++calm >= 2)) && return 0; else calm=0; fi
  done
  return 1
}
running() {
  local p line
  for p; do
    { IFS= read -r line < "/proc/$p/stat"; } 2>/dev/null || continue
    line=\${line##*) }; [[ $line == [ZX]* ]] || return 0
  done
  return 1
}
settle() { local i; for ((i = 0; i < $1; i++)); do running "\${@:2}" || return 0; read -t 0.01 -u $nap; done; return 1; }
freeze STOP
# The wrapper goes first and alone: were a child to die before it, bash would
# report the child's death ("Terminated") into the output.
if [[ -n $root && -n \${hit[$root]} ]]; then
  kill -s ${target.rootSignal ?? signal} "$root" 2>/dev/null; kill -s CONT "$root" 2>/dev/null
  settle 100 "$root"
fi
pids=("\${!hit[@]}")
${
  signal === "TERM"
    ? `if ((\${#pids[@]})); then
  kill -s TERM "\${pids[@]}" 2>/dev/null; kill -s CONT "\${pids[@]}" 2>/dev/null
  if ! settle ${graceTicks} "\${pids[@]}"; then
    freeze STOP; pids=("\${!hit[@]}")
    kill -s KILL "\${pids[@]}" 2>/dev/null
    freeze "STOP KILL"; pids=("\${!hit[@]}")
  fi
fi`
    : `if ((\${#pids[@]})); then
  kill -s KILL "\${pids[@]}" 2>/dev/null
  freeze "STOP KILL"; pids=("\${!hit[@]}")
fi`
}
settle 500 "\${pids[@]}"
left=0
for p in "\${pids[@]}"; do running "$p" && ((left++)); done
out=
for p in "\${pids[@]}"; do out+=" $p:\${hit[$p]}"; done
printf '${KILLED_PREFIX}%s\\n${LEFT_PREFIX}%s\\n' "$out" "$left"
exit 0
`;
}

export interface SweepResult {
  /** What the sweep hit, as `pid:starttime` (for a later round to reach them again). */
  hit: string[];
  /** True when the script ran to its end and nothing it hit is still running. */
  clean: boolean;
}

export function parseSweep(output: string): SweepResult {
  const lines = output.split("\n");
  const killed = lines.find((line) => line.startsWith(KILLED_PREFIX));
  const left = lines.find((line) => line.startsWith(LEFT_PREFIX));
  const hit = (killed ?? "")
    .slice(KILLED_PREFIX.length)
    .split(/\s+/)
    .filter((entry) => /^\d+:\d+$/.test(entry));
  return { hit, clean: left !== undefined && left.slice(LEFT_PREFIX.length).trim() === "0" };
}
