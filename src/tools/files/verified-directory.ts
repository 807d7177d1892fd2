/**
 * Entering the directory a write goes to, and proving where it is, in the same
 * bash that then writes there. The guard judged a path resolved earlier; if a
 * component was swapped for a symlink since, walking the path again by name
 * would land somewhere else. So the write's bash changes into the directory,
 * asks the kernel where its cwd really is (`cd -P .` sets PWD from getcwd, no
 * fork), and refuses unless it is exactly the directory the guard approved.
 * Every later step (temp file, rename, hash) names files relative to that cwd,
 * which is held by inode: a swap after the check cannot redirect it. Missing
 * parents are created one component at a time, each checked the same way.
 */

import { shellQuote } from "../shared/backend-io.js";

/** The directory part of an absolute, symlink-free path ("/" for a top-level file). */
export function directoryOf(resolved: string): string {
  const cut = resolved.lastIndexOf("/");
  return cut <= 0 ? "/" : resolved.slice(0, cut);
}

/** The last component of an absolute path. */
export function baseNameOf(resolved: string): string {
  return resolved.slice(resolved.lastIndexOf("/") + 1);
}

/**
 * Bash that makes `dir` (absolute, symlink-free) the cwd, or prints
 * `moved <where the cwd really is>` and exits 0 without touching anything.
 * With `create`, missing components are made (each inside a checked parent).
 */
export function enterVerifiedDirectory(dir: string, options: { create: boolean }): string {
  const lines = [
    `__sw_want=${shellQuote(dir)}`,
    // True when the cwd really is $1 now (getcwd, not the name we came by).
    `__sw_at() { builtin cd -P . 2>/dev/null && [ "$PWD" = "$1" ]; }`,
    `__sw_moved() { builtin printf 'moved %s\\n' "$PWD"; builtin exit 0; }`,
  ];
  if (!options.create) {
    lines.push(`builtin cd -P -- "$__sw_want" 2>/dev/null || exit 1`, `__sw_at "$__sw_want" || __sw_moved`);
    return lines.join("\n");
  }
  lines.push(
    // The deepest existing ancestor, then the components still to make.
    `__sw_e=$__sw_want; __sw_new=`,
    `while [ ! -d "$__sw_e" ]; do __sw_new="\${__sw_e##*/}/$__sw_new"; __sw_e=\${__sw_e%/*}; [ -n "$__sw_e" ] || __sw_e=/; done`,
    `builtin cd -P -- "$__sw_e" 2>/dev/null || exit 1`,
    `__sw_at "$__sw_e" || __sw_moved`,
    `while [ -n "$__sw_new" ]; do`,
    `  __sw_c=\${__sw_new%%/*}; __sw_new=\${__sw_new#*/}; __sw_e=\${__sw_e%/}/$__sw_c`,
    `  [ -d "./$__sw_c" ] || mkdir -- "./$__sw_c" 2>/dev/null || [ -d "./$__sw_c" ] || exit 1`,
    `  builtin cd -P -- "./$__sw_c" 2>/dev/null || exit 1`,
    `  __sw_at "$__sw_e" || __sw_moved`,
    `done`,
  );
  return lines.join("\n");
}
