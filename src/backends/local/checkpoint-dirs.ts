/**
 * The directories a rollback or fork makes beside the workspace root, outside
 * the state dir (`.<name>.shellwright-restore-<tag>`, `-old-<tag>`,
 * `<root>.fork-<tag>`): each is recorded in the state dir while it exists, so
 * `shellwright sessions --prune` removes it when the session's owner died
 * before it could (leftovers.ts).
 */

import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { shellQuote } from "../../core/script.js";
import { basename, isAbsolute, join } from "node:path";
import { SANDBOX_DIR_PREFIX } from "./paths.js";

export const CHECKPOINT_DIRS_FILE = "checkpoint-dirs";

/** Only names this module makes: a forged line cannot make a cleanup remove anything else (an ERE for bash too). */
const OURS_PATTERN = String.raw`^(\..+\.shellwright-(restore|old)-[0-9a-f]{12}|.+\.fork-[0-9a-f]{12})$`;
const OURS = new RegExp(OURS_PATTERN);

export function recordDir(stateDir: string, path: string): void {
  appendFileSync(join(stateDir, CHECKPOINT_DIRS_FILE), `${path}\n`, { mode: 0o600 });
}

export function forgetDir(stateDir: string, path: string): void {
  const file = join(stateDir, CHECKPOINT_DIRS_FILE);
  const kept = read(file).filter((line) => line !== path);
  try {
    writeFileSync(file, kept.map((line) => `${line}\n`).join(""), { mode: 0o600 });
  } catch {
    // The state dir is gone (the session closed): nothing left to forget.
  }
}

/** Removes what a dead session's state dir recorded; a sandboxed one's record is ignored (its commands could write it). */
export function removeLeftoverDirs(stateDir: string): void {
  if (basename(stateDir).startsWith(SANDBOX_DIR_PREFIX)) return;
  for (const path of read(join(stateDir, CHECKPOINT_DIRS_FILE)))
    if (isAbsolute(path) && OURS.test(basename(path))) rmSync(path, { recursive: true, force: true });
}

function read(file: string): string[] {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line !== "");
  } catch {
    return [];
  }
}

/** removeLeftoverDirs for the owner watchdog: a bash line that removes what the state dir recorded. */
export function removeRecordedDirsLine(stateDir: string): string {
  const file = shellQuote(join(stateDir, CHECKPOINT_DIRS_FILE));
  return (
    `__sw_re=${shellQuote(OURS_PATTERN)}; [[ -f ${file} ]] && while IFS= read -r d; do ` +
    // Again while it is there: a copy the dead owner had started may still be writing into it (up to 5 s).
    `[[ $d == /* && \${d##*/} =~ $__sw_re ]] && for ((t = 0; t < 50; t++)); do rm -rf -- "$d" 2>/dev/null; ` +
    `[[ -e $d || -L $d ]] || break; sleep 0.1; done; done < ${file}`
  );
}
