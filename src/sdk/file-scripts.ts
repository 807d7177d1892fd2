/**
 * The bash the SDK's files API runs on the backend (src/sdk/files.ts), as
 * pure builders. Each reports in the framed form `parseFramed` reads (`key
 * value` lines, `--`, then bytes), and every byte of a file or a name travels
 * exactly: names are NUL-separated, contents are raw (runOnBackend carries
 * them base64-encoded).
 */

import { quotePath, RESOLVE_PATH, shellQuote } from "../tools/shared/backend-io.js";

/** The start of every producer: `$__sw_p` is the path, `~` expanded by bash on the backend. */
const pathLine = (path: string): string => `__sw_p=${quotePath(path)}`;

/**
 * Why a path cannot be read as a file, as a `kind` line, or nothing when it
 * is a regular, readable file. A FIFO or a device is refused: reading one may
 * never end.
 */
const READABLE_FILE = [
  `if [ -d "$__sw_p" ]; then echo 'kind dir'; exit 0; fi`,
  `if [ ! -e "$__sw_p" ]; then echo 'kind missing'; exit 0; fi`,
  `if [ ! -f "$__sw_p" ]; then echo 'kind special'; exit 0; fi`,
  `if [ ! -r "$__sw_p" ]; then echo 'kind unreadable'; exit 0; fi`,
];

/**
 * `length` bytes of the file from byte `offset` (fewer at its end), base64,
 * between two lines that start with `token`: the header (`kind …`) and the
 * end (the statuses of tail and head). Read from the call's output stream,
 * which no output limit cuts (files.ts), so one call carries a large chunk.
 */
export function readChunkScript(path: string, offset: number, length: number, token: string): string {
  return [
    pathLine(path),
    ...READABLE_FILE.map((line) => line.replace(/echo '(kind [a-z]+)'/, `printf '\\n${token} %s\\n' '$1'`)),
    `printf '\\n${token} kind file\\n'`,
    // tail seeks in a regular file: a chunk deep in a large file costs what the first one does.
    `tail -c +${offset + 1} -- "$__sw_p" 2>/dev/null | head -c ${length} 2>/dev/null | base64`,
    `printf '\\n${token} end %s %s\\n' "\${PIPESTATUS[0]}" "\${PIPESTATUS[1]}"`,
  ].join("\n");
}

/**
 * One entry per path, each as eight NUL-terminated fields: type letter (find's
 * %y), size, octal mode, mtime in seconds, path relative to the start, link
 * target, owner, group (file-entries.ts reads them). GNU find prints them itself; elsewhere (busybox) stat does, one
 * entry at a time.
 */
function entriesOf(start: string, depth: { min: number; max: number }): string[] {
  const bounds = `-mindepth ${depth.min} -maxdepth ${depth.max}`;
  return [
    `if find / -maxdepth 0 -printf '' >/dev/null 2>&1; then`,
    `  find ${start} ${bounds} -printf '%y\\0%s\\0%m\\0%T@\\0%P\\0%l\\0%u\\0%g\\0' 2>/dev/null`,
    `else`,
    `  find ${start} ${bounds} -print0 2>/dev/null | while IFS= read -r -d '' __sw_f; do`,
    `    __sw_s=$(stat -c '%F|%s|%a|%Y|%U|%G' -- "$__sw_f" 2>/dev/null) || continue`,
    `    case $__sw_s in 'regular'*) __sw_y=f ;; directory*) __sw_y=d ;; 'symbolic link'*) __sw_y=l ;; *) __sw_y=o ;; esac`,
    `    IFS='|' read -r __sw_y0 __sw_z __sw_m __sw_t __sw_u __sw_g <<< "$__sw_s"`,
    `    __sw_r=\${__sw_f#${start}}; __sw_r=\${__sw_r#/}; __sw_l=; [ "$__sw_y" != l ] || __sw_l=$(readlink -- "$__sw_f")`,
    `    printf '%s\\0%s\\0%s\\0%s\\0%s\\0%s\\0%s\\0%s\\0' "$__sw_y" "$__sw_z" "$__sw_m" "$__sw_t" "$__sw_r" "$__sw_l" "$__sw_u" "$__sw_g"`,
    `  done`,
    `fi`,
  ];
}

/** `abs` (the path made absolute, not resolved) and, for a directory, its entries down to `depth`. */
export function listScript(path: string, depth: number): string {
  return [
    pathLine(path),
    `if [ ! -d "$__sw_p" ]; then if [ -e "$__sw_p" ] || [ -L "$__sw_p" ]; then echo 'kind notdir'; else echo 'kind missing'; fi; exit 0; fi`,
    `__sw_a=$(builtin cd -- "$__sw_p" 2>/dev/null && builtin pwd) || { echo 'kind unreadable'; exit 0; }`,
    `printf 'kind dir\\nabs %s\\n--\\n' "$__sw_a"`,
    ...entriesOf(`"$__sw_a"`, { min: 1, max: depth }),
  ].join("\n");
}

/** The one entry at `path` itself (a symlink as the link), or `kind missing`. */
export function statScript(path: string): string {
  return [
    pathLine(path),
    `if [ ! -e "$__sw_p" ] && [ ! -L "$__sw_p" ]; then echo 'kind missing'; exit 0; fi`,
    `case $__sw_p in /*) __sw_a=$__sw_p ;; *) __sw_a=$PWD/$__sw_p ;; esac`,
    `printf 'kind entry\\nabs %s\\n--\\n' "$__sw_a"`,
    ...entriesOf(`"$__sw_a"`, { min: 0, max: 0 }),
  ].join("\n");
}

/**
 * What a change to `path` needs to know before it acts (remove, mkdir): its
 * parent resolved on the backend (symlinks followed: that is where the change
 * lands) with the name kept as given (a symlink is removed, not its target),
 * what is there now, the backend's home and the safe root, resolved the same
 * way, for the guard.
 */
export function entryProbeScript(parent: string, name: string, safeRoot: string | undefined): string {
  const resolveAll = [`"$HOME"`, `"$__sw_p"`, ...(safeRoot === undefined ? [] : [`"$__sw_root"`])].join(" ");
  return [
    `__sw_p=${quotePath(parent)}; __sw_n=${shellQuote(name)}${safeRoot === undefined ? "" : `; __sw_root=${quotePath(safeRoot)}`}`,
    `if [ -L "$__sw_p/$__sw_n" ]; then __sw_k=link; elif [ -d "$__sw_p/$__sw_n" ]; then __sw_k=dir; elif [ -f "$__sw_p/$__sw_n" ]; then __sw_k=file; elif [ -e "$__sw_p/$__sw_n" ]; then __sw_k=other; else __sw_k=missing; fi`,
    `if __sw_all=$(realpath -m -- ${resolveAll} 2>/dev/null); then`,
    `  { IFS= read -r __sw_h; IFS= read -r __sw_r; IFS= read -r __sw_rr; } <<< "$__sw_all"`,
    `else`,
    `  ${RESOLVE_PATH.replace(/\n/g, "; ")}; __sw_keep=$__sw_r`,
    `  __sw_p=$HOME; ${RESOLVE_PATH.replace(/\n/g, "; ")}; __sw_h=$__sw_r`,
    safeRoot === undefined ? "" : `  __sw_p=$__sw_root; ${RESOLVE_PATH.replace(/\n/g, "; ")}; __sw_rr=$__sw_r`,
    `  __sw_r=$__sw_keep`,
    `fi`,
    `[ -d "$__sw_r" ] && __sw_pk=dir || { [ -e "$__sw_r" ] && __sw_pk=other || __sw_pk=missing; }`,
    `printf 'home %s\\nparent %s\\nparent_kind %s\\nkind %s\\n' "$__sw_h" "$__sw_r" "$__sw_pk" "$__sw_k"`,
    safeRoot === undefined ? "" : `printf 'root %s\\n' "$__sw_rr"`,
  ]
    .filter(Boolean)
    .join("\n");
}

/** Whether anything (a dangling symlink too) is at `path`. */
export function existsScript(path: string): string {
  return [
    pathLine(path),
    `if [ -e "$__sw_p" ] || [ -L "$__sw_p" ]; then echo 'exists yes'; else echo 'exists no'; fi`,
  ].join("\n");
}
