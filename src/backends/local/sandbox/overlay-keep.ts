/**
 * When a sandboxed session's owner dies before close() (docs/branching.md),
 * its workspace changes live only in the overlay's layers, in the state dir
 * that the owner watchdog (owner-cleanup.ts) or `shellwright sessions
 * --prune` (leftovers.ts) is about to remove. Before that, the layers the
 * stack recorded last are mounted again, read only (an overlay of lower
 * layers only: the upper, the frozen chain newest first, then the host
 * directory), in a mount namespace of the keep's own that goes with it, and
 * the view is copied whole to `<root>.shellwright-unsaved-<tag>`, as the
 * failed write-back at close does (overlay-writeback.ts `rescue`). The host
 * directory is not touched: the copy is made whole, then left for the user.
 *
 * Nothing a command of the session could have planted is run or trusted: the
 * layers dir is bound into the sandbox owned by an unmapped uid and 0700 (no
 * command could make or enter such a dir), which the keep checks first;
 * only then does it read the record there, and every layer name in it must be
 * digits naming a real directory in the layers dir. The programs run are the
 * host's, from a fixed PATH of its system dirs.
 */

import { spawn } from "node:child_process";
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { shellQuote } from "../../../core/script.js";
import { LAYERS_DIR, MAX_LAYERS, OPTIONS, ROOT_FILE, STACK_FILE, UNMAPPED_UID, VIEW_DIR } from "./overlay.js";

/**
 * Bash run with the layers dir as "$1": exits 0 when it kept the workspace
 * (and prints where) or found nothing to keep, non-zero when it could not
 * (the layers must then stay). No record: the session never mounted its
 * overlay, or close wrote the changes back already.
 */
const KEEP_SCRIPT = `PATH=/usr/sbin:/usr/bin:/sbin:/bin
cd -- "$1" 2>/dev/null || exit 0
[[ $(stat -c %u:%a -- .) == ${UNMAPPED_UID}:700 ]] || exit 0
[[ -f ${STACK_FILE} && ! -L ${STACK_FILE} ]] || exit 0
[[ -f ${ROOT_FILE} && ! -L ${ROOT_FILE} && -d lower && ! -L lower && -d ${VIEW_DIR} && ! -L ${VIEW_DIR} ]] || exit 3
root=$(<${ROOT_FILE})
[[ $root == /* ]] || exit 3
read -r -a names < ${STACK_FILE} || exit 3
(( \${#names[@]} >= 1 && \${#names[@]} <= ${MAX_LAYERS} )) || exit 3
lower=
for n in "\${names[@]}"; do
  [[ $n =~ ^[0-9]{1,9}$ && -d $n && ! -L $n ]] || exit 3
  lower+=$n:
done
kept=$(mktemp -d -- "$root.shellwright-unsaved-XXXXXXXXXXXX") || exit 4
# A private mount namespace: the mounts are nobody else's, and go when it ends.
if unshare -m --propagation private -- sh -c 'mount --bind -- "$1" lower && mount -t overlay overlay -o "ro,$2,lowerdir=$3lower" -- ${VIEW_DIR} && cp -a ${VIEW_DIR}/. "$4"' \\
  keep "$root" ${shellQuote(OPTIONS)} "$lower" "$kept" >&2; then
  printf '%s\\n' "$kept"
else
  rm -rf -- "$kept"
  exit 5
fi`;

/** Bash for the owner watchdog's cleanup: keeps the workspace of the session whose state dir is `stateDir`; true when the dir may go. */
export function keepScript(stateDir: string, bash: string): string {
  return `${shellQuote(bash)} --norc --noprofile -c ${shellQuote(KEEP_SCRIPT)} keep ${shellQuote(join(stateDir, LAYERS_DIR))} >/dev/null 2>&1`;
}

/**
 * `--prune`: keeps a dead owner's workspace from the state dir `dir`; the path it
 * was copied to, undefined when there was nothing to keep. Throws when there
 * was something and it could not be kept: the dir must then stay.
 */
export async function keepUnsavedWorkspace(dir: string, bash: string): Promise<string | undefined> {
  const layers = join(dir, LAYERS_DIR);
  const st = lstatSync(layers, { throwIfNoEntry: false });
  // What no sandboxed command could have made; anything else is not a workspace's layers.
  if (st === undefined || !st.isDirectory() || st.uid !== UNMAPPED_UID || (st.mode & 0o7777) !== 0o700)
    return undefined;
  const { code, out, err } = await run(bash, ["--norc", "--noprofile", "-c", KEEP_SCRIPT, "keep", layers]);
  if (code !== 0)
    throw new Error(
      `cannot keep the unsaved workspace changes in ${layers} (exit ${code}): ${err.trim() || "invalid"}`,
    );
  return out.trim() || undefined;
}

function run(bash: string, argv: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bash, argv, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", SHLVL: "1" },
    });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (out += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (err = (err + text).slice(-2000)));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, out, err }));
  });
}
