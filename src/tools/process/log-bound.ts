/**
 * A background process's log, bounded inside the backend: its output goes
 * through a pipe to a bounder (bash and GNU head -c under stdbuf -o0, which
 * reads no more than it writes and writes each read at once) that writes the first
 * `headBytes` to `log` and the rest to segments `log.000000000000`,
 * `log.000000000001`, … of `segmentBytes` each, removing all but the last
 * two: the head and a rolling tail, never more than `maxLogBytes` in all
 * however much the process prints. The offsets stay those of the whole
 * output: segment k starts at headBytes + k × segmentBytes, so poll and the
 * follower read the same stream as before, with the middle gone.
 *
 * It needs GNU coreutils 8.28 or later with a working stdbuf (tail -f ends
 * when its reader does); without them the log is written
 * directly and unbounded, as before. The file `bound` (two numbers) says which.
 */

/** The split of `maxLogBytes` between the head and the two segments of the tail. */
export function logLayout(maxLogBytes: number): { headBytes: number; segmentBytes: number } {
  const headBytes = Math.floor(maxLogBytes / 4);
  return { headBytes, segmentBytes: Math.floor((maxLogBytes - headBytes) / 2) };
}

/** A segment's name: the directory, the log's name (`log`, or `err` for a stderr kept apart), its number. */
const SEGMENT = `'%s/%s.%012d'`;

/**
 * Bash functions for the launch: __sw_bounding (true when this backend's
 * coreutils can bound) and __sw_bound DIR HEAD SEGMENT [NAME] (copies its
 * stdin to NAME, `log` by default, and its segments NAME.000000000000, …).
 */
export const BOUND_FUNCTIONS = [
  "__sw_bounding() {",
  // One run proves stdbuf works here (it preloads a library) and gives coreutils' version.
  "  local v; v=$(command stdbuf -o0 head --version 2>/dev/null) || return 1",
  "  [[ $v =~ coreutils\\)\\ ([0-9]+)\\.([0-9]+) ]] || return 1",
  "  (( BASH_REMATCH[1] > 8 || (BASH_REMATCH[1] == 8 && BASH_REMATCH[2] >= 28) ))",
  "}",
  "__sw_bound() {",
  "  local d=$1 h=$2 s=$3 m=${4:-log} k=0 n f",
  '  command stdbuf -o0 head -c "$h" > "$d/$m" || return',
  '  n=$(command wc -c < "$d/$m"); (( ${n//[!0-9]/} < h )) && return',
  "  while :; do",
  `    builtin printf -v f ${SEGMENT} "$d" "$m" "$k"`,
  '    command stdbuf -o0 head -c "$s" > "$f" || return',
  '    n=$(command wc -c < "$f"); (( ${n//[!0-9]/} < s )) && return',
  `    (( k > 0 )) && { builtin printf -v f ${SEGMENT} "$d" "$m" $((k - 1)); command rm -f -- "$f"; }`,
  "    k=$((k + 1))",
  "  done",
  "}",
].join("\n");

/** How long the wrapper waits for the bounder to write what the command printed before its end. */
const DRAIN_SECONDS = 1;

/**
 * The wrapper's lines around the command, when `bound` says to bound: the
 * bounder as a coprocess reading the wrapper's output (TERM, INT and HUP
 * ignored: it ends at the end of its input, so what a command prints while it
 * is being stopped is kept), and after the command, the wait for it to drain
 * (bounded: a job left running may hold the pipe open, and the bounder with
 * it, until the job ends or kill, reap or close() end the group and every
 * process carrying the mark, the bounder among them).
 *
 * The bounder holds nothing but its pipes: above all not the wrapper's lock
 * on fd 9, or a job left running would hold back every wait for the
 * process's end. It closes fd 9 with `exec` inside its body: a redirection on
 * the coproc (`} 9>&-`) made bash keep a saved copy of the fd (on fd 10 or
 * above) in the coprocess for as long as its body ran.
 */
export function boundWrapper(dir: string): { before: string; after: string } {
  return {
    before: [
      `if [[ -s ${dir}/bound ]] && builtin read -r __sw_h __sw_s < ${dir}/bound; then`,
      `  coproc __SW_BOUND { exec 2>/dev/null 9>&-; builtin trap '' TERM INT HUP; __sw_bound ${dir} "$__sw_h" "$__sw_s"; }`,
      "  __sw_r=${__SW_BOUND[0]} __sw_w=${__SW_BOUND[1]}",
      '  exec >&"$__sw_w" 2>&1 {__sw_w}>&-',
      "fi",
    ].join("\n"),
    after: `[[ -n \${__sw_r-} ]] && { exec >/dev/null 2>&1; builtin read -r -t ${DRAIN_SECONDS} -u "$__sw_r" _ 2>/dev/null; }`,
  };
}

/**
 * Bash functions for the poll. __sw_logspan DIR OFFSET CAP sets __sw_size
 * (the bytes the process printed so far) and __sw_start (where the bytes to
 * read start: OFFSET, or later when the newest CAP bytes are all it takes or
 * the bytes at OFFSET are gone); __sw_logcat DIR then prints them.
 */
export const LOG_READ_FUNCTIONS = [
  "__sw_logspan() {",
  "  local d=$1 off=$2 cap=$3 n",
  "  __sw_h= __sw_s= __sw_first=-1",
  '  [[ -s $d/bound ]] && builtin read -r __sw_h __sw_s < "$d/bound"',
  '  __sw_segs=("$d"/log.????????????)',
  "  if [[ -n $__sw_h && -e ${__sw_segs[0]} ]]; then",
  "    __sw_first=$((10#${__sw_segs[0]##*.}))",
  '    n=$(command wc -c < "${__sw_segs[-1]}" 2>/dev/null) || n=0; n=${n//[!0-9]/}',
  "    __sw_size=$((__sw_h + 10#${__sw_segs[-1]##*.} * __sw_s + ${n:-0}))",
  "  else",
  '    n=$(command wc -c < "$d/log" 2>/dev/null) || n=0; n=${n//[!0-9]/}; __sw_size=${n:-0}',
  "  fi",
  "  __sw_start=$off; (( __sw_size - off > cap )) && __sw_start=$((__sw_size - cap)); (( __sw_start > __sw_size )) && __sw_start=$__sw_size",
  // Bytes before the oldest segment kept are gone (the head's too, when a gap follows it).
  "  (( __sw_first > 0 && __sw_start < __sw_h + __sw_first * __sw_s )) && __sw_start=$((__sw_h + __sw_first * __sw_s))",
  "  return 0",
  "}",
  "__sw_logcat() {",
  "  local d=$1 f from",
  "  {",
  '    (( __sw_first < 0 || __sw_start < ${__sw_h:-0} )) && command tail -c +$((__sw_start + 1)) "$d/log" 2>/dev/null',
  '    (( __sw_first >= 0 )) && for f in "${__sw_segs[@]}"; do',
  "      from=$((__sw_h + 10#${f##*.} * __sw_s))",
  "      (( from + __sw_s <= __sw_start )) && continue",
  '      if (( from < __sw_start )); then command tail -c +$((__sw_start - from + 1)) "$f"; else command cat -- "$f"; fi 2>/dev/null || break',
  "    done",
  "  } | command head -c $((__sw_size - __sw_start))",
  "}",
].join("\n");

/** The files a process's output is kept in: `log` (stdout and stderr merged, or stdout alone), `err` (stderr apart). */
export type LogName = "log" | "err";

/**
 * Follows the log `name` from byte `fromByte` of the whole output (its start by default) as it grows, ending when the wrapper `pid`
 * does (GNU tail's --pid): the head, then each segment in turn (one that is
 * gone is skipped). Without a `bound` file, the one log file, as before (a
 * tail without --pid, busybox's, follows until the caller aborts it).
 */
export function followScript(dir: string, pid: number, fromByte = 0, name: LogName = "log"): string {
  const log = `${dir}/${name}`;
  const segment = `'%s/${name}.%012d'`;
  const from = Math.max(0, Math.floor(fromByte));
  return [
    `if [[ ! -s ${dir}/bound ]]; then command tail -s 0.02 -c +${from + 1} --pid=${pid} -f ${log} 2>/dev/null || command tail -c +${from + 1} -f ${log}; builtin exit; fi`,
    // The file that holds byte `from` of the whole output, and where in it: the head, or a segment.
    `builtin read -r __sw_h __sw_s < ${dir}/bound; __sw_k=-1 __sw_skip=${from}`,
    `(( ${from} >= __sw_h )) && __sw_k=$(( (${from} - __sw_h) / __sw_s )) __sw_skip=$(( (${from} - __sw_h) % __sw_s ))`,
    "while :; do",
    `  if (( __sw_k < 0 )); then __sw_f=${log} __sw_n=$__sw_h; else builtin printf -v __sw_f ${segment} ${dir} "$__sw_k"; __sw_n=$__sw_s; fi`,
    `  command tail -s 0.02 -c +$((__sw_skip + 1)) --retry --pid=${pid} -f "$__sw_f" 2>/dev/null | command stdbuf -o0 head -c "$((__sw_n - __sw_skip))"`,
    "  __sw_skip=0 __sw_k=$((__sw_k + 1))",
    `  builtin printf -v __sw_f ${segment} ${dir} "$__sw_k"`,
    "  if [[ ! -e $__sw_f ]]; then",
    `    __sw_segs=(${dir}/${name}.????????????)`,
    `    if [[ -e \${__sw_segs[0]} ]] && (( 10#\${__sw_segs[0]##*.} > __sw_k )); then __sw_k=$((10#\${__sw_segs[0]##*.})); continue; fi`,
    `    builtin kill -0 ${pid} 2>/dev/null || break`,
    "  fi",
    "done",
  ].join("\n");
}
