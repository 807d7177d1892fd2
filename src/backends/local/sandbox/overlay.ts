/**
 * A sandboxed session's workspace as overlayfs layers (docs/branching.md).
 *
 * Inside the sandbox the workspace root is an overlay: its lowest layer is
 * the host directory, unchanged while the session runs, and every write goes
 * to the upper layer, a directory in the session's `layers` dir. A checkpoint
 * freezes the upper layer: the overlay is mounted again with it as the top
 * lower layer and a fresh, empty upper; a rollback mounts the layers the
 * checkpoint froze with a fresh upper. Nothing unchanged is copied, and the
 * stack stays one overlay deep (overlay over overlay nests only twice).
 *
 * Mounting needs capabilities the session's commands never have, so each
 * step runs as this process's root, entered into the sandbox's mount
 * namespace only (not its user namespace, which owns no capability over
 * it). overlayfs takes its layers only from that namespace: the layers dir is
 * bound into the sandbox at its own path, owned by an unmapped uid and 0700,
 * so a command can neither enter it nor rename it (it is a mount point), and
 * the host directory is bound read-only below it as `lower`.
 */

import { spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { CheckpointError } from "../../../core/errors.js";

/** The layers dir, under the session's state dir. */
export const LAYERS_DIR = "layers";
/** Owner of the layers dir: unmapped in the sandbox (which maps only the session's user), so no command enters it. */
export const UNMAPPED_UID = 65534;
/**
 * In the layers dir, for when the owner dies before close (overlay-keep.ts):
 * the host directory's path, and the layers of the stack now (upper first).
 */
export const ROOT_FILE = "root";
export const STACK_FILE = "stack";
/** In the layers dir: where a dead owner's layers are mounted again to be copied (overlay-keep.ts). */
export const VIEW_DIR = "view";
/** overlayfs stacks at most 500 lower layers; the mount options must also fit one page. */
export const MAX_LAYERS = 200;
const BACKEND = "local";
/** Plain layers: a renamed directory is copied up whole rather than redirected, so each layer is self-contained. */
export const OPTIONS = "redirect_dir=off,index=off,metacopy=off,xino=off";

/**
 * Unmounts the root, retrying for up to 2 s while it is busy: the fast path's
 * launcher, stopped just before, holds its cwd there until it is gone.
 */
const UNMOUNT = `n=0; until umount -- "$ROOT" 2>/dev/null; do n=$((n+1)); [ $n -lt 100 ] || break; sleep 0.02; done; [ $n -lt 100 ]`;

/** The error for a script's exit code, when it has a meaning of its own. */
type Explain = (code: number | null) => CheckpointError | undefined;

export interface OverlayStack {
  /** Frozen layers, newest first. */
  chain: number[];
  /** The writable layer. */
  upper: number;
}

export class WorkspaceOverlay {
  readonly root: string;
  readonly layers: string;
  readonly #nsenter: string;
  #initPid = 0;
  #stack: OverlayStack = { chain: [], upper: 1 };
  #next = 2;

  constructor(root: string, stateDir: string, nsenter: string) {
    this.root = root;
    this.layers = join(stateDir, LAYERS_DIR);
    this.#nsenter = nsenter;
  }

  get stack(): OverlayStack {
    return { chain: [...this.#stack.chain], upper: this.#stack.upper };
  }

  /** Host paths of every layer of the stack now, the upper first (what a write-back applies). */
  get layerDirs(): string[] {
    return [this.#stack.upper, ...this.#stack.chain].map((n) => join(this.layers, String(n)));
  }

  /** Before bwrap starts: the layers dir it binds, with the mount point of the host directory in it. */
  prepare(): void {
    mkdirSync(join(this.layers, "lower"), { recursive: true, mode: 0o700 });
    mkdirSync(join(this.layers, VIEW_DIR), { mode: 0o700 });
    writeFileSync(join(this.layers, ROOT_FILE), this.root, { mode: 0o600 });
    chownSync(this.layers, UNMAPPED_UID, UNMAPPED_UID);
  }

  /** Once the sandbox runs: the host directory bound as `lower`, the first overlay mounted over the root. */
  async mount(initPid: number): Promise<void> {
    this.#initPid = initPid;
    this.#makeUpper(this.#stack);
    await this.#run(`mount --bind -o ro -- "$ROOT" lower && ${mountLine(this.#stack)}`, "mount the workspace overlay");
    this.#record();
  }

  /**
   * Freezes the upper layer and mounts a fresh one over it. Refused while a
   * process of the session holds a file or its cwd in the workspace: it would
   * go on writing into the frozen layer.
   */
  async freeze(): Promise<{ chain: number[]; bytes: number }> {
    if (this.#stack.chain.length + 1 >= MAX_LAYERS)
      throw new CheckpointError(
        "failed",
        `Cannot take a checkpoint: the workspace already stacks ${this.#stack.chain.length} checkpoints' layers, the most an overlay holds here (${MAX_LAYERS - 1}); roll back to an earlier checkpoint first`,
        { backend: BACKEND },
      );
    const old = this.#stack;
    const next: OverlayStack = { chain: [old.upper, ...old.chain], upper: this.#next++ };
    this.#makeUpper(next);
    const script = `${UNMOUNT} || exit 75
${mountLine(next)} || { ${mountLine(old)}; exit 1; }`;
    await this.#mountOrDrop(next, script, "take a checkpoint", (code) =>
      code === 75
        ? new CheckpointError(
            "busy",
            "Cannot take a checkpoint: a process of the session (a background process or a PTY) has a file or its cwd open in the workspace, and it would go on writing into the checkpoint; end it (or roll back) first",
            { backend: BACKEND },
          )
        : undefined,
    );
    this.#stack = next;
    this.#record();
    this.#removeWork(old);
    return { chain: next.chain, bytes: treeBytes(join(this.layers, String(old.upper))) };
  }

  /** With the session's processes ended: the layers of `chain` with a fresh upper, over the root. */
  async restore(chain: number[]): Promise<void> {
    const old = this.#stack;
    const next: OverlayStack = { chain: [...chain], upper: this.#next++ };
    // Lazily detached if anything still holds it: the processes are ended, the mount goes with the last of them.
    this.#makeUpper(next);
    const script = `${UNMOUNT} || umount -l -- "$ROOT" || exit 1
${mountLine(next)} || { ${mountLine(old)}; exit 1; }`;
    await this.#mountOrDrop(next, script, "roll back");
    this.#stack = next;
    this.#record();
    this.#removeWork(old);
  }

  /**
   * A fresh upper layer and its work dir, made from the host. The overlay's
   * root shows the upper's own mode, owner and times, so the new upper takes
   * those the root showed when its top layer was frozen (the host dir's at first).
   */
  #makeUpper(stack: OverlayStack): void {
    const upper = join(this.layers, String(stack.upper));
    mkdirSync(upper);
    mkdirSync(join(this.layers, `w${stack.upper}`));
    const top = stack.chain[0] === undefined ? this.root : join(this.layers, String(stack.chain[0]));
    const st = lstatSync(top);
    chownSync(upper, st.uid, st.gid);
    chmodSync(upper, st.mode & 0o7777);
    utimesSync(upper, st.atime, st.mtime);
  }

  /** The stack now, on disk for a keep after the owner's death; replaced whole (a rename), never half written. */
  #record(): void {
    const file = join(this.layers, STACK_FILE);
    writeFileSync(`${file}.new`, `${this.layerDirs.map((dir) => basename(dir)).join(" ")}\n`, { mode: 0o600 });
    renameSync(`${file}.new`, file);
  }

  /** The changes are in the host directory (close wrote them back): nothing is left to keep if the owner dies now. */
  saved(): void {
    rmSync(join(this.layers, STACK_FILE), { force: true });
  }

  /** Runs a remount of `next`; when it fails, `next`'s fresh dirs go (the stack is still the old one). */
  async #mountOrDrop(next: OverlayStack, script: string, what: string, explain?: Explain): Promise<void> {
    try {
      await this.#run(script, what, explain);
    } catch (error) {
      for (const name of [String(next.upper), `w${next.upper}`])
        rmSync(join(this.layers, name), { recursive: true, force: true });
      throw error;
    }
  }

  #removeWork(stack: OverlayStack): void {
    rmSync(join(this.layers, `w${stack.upper}`), { recursive: true, force: true });
  }

  /** Removes layers no checkpoint and not the stack now needs. */
  async forget(keep: Iterable<number>): Promise<void> {
    const kept = new Set([...keep, ...this.#stack.chain, this.#stack.upper]);
    const names = await readdir(this.layers).catch(() => [] as string[]);
    const gone = names.filter((name) => /^\d+$/.test(name) && !kept.has(Number(name)));
    await Promise.all(gone.map((name) => rm(join(this.layers, name), { recursive: true, force: true })));
  }

  /**
   * Ends every process in the sandbox but bwrap's init (pid 1) and the command that holds it (pid 2: when it
   * ends, so does the sandbox), however it left the session's groups, marks and cgroup: what a command left
   * running could otherwise swap a name for a symlink while the host reads the overlay. Repeated while a
   * process is still found (a zombie is skipped: its parent reaps it; its state is read after the last `) `
   * of its stat line, since a process names itself).
   */
  async endAllButInit(): Promise<void> {
    await this.#run(
      `i=0; while [ $i -lt 50 ]; do found=; for d in /proc/[0-9]*; do p=\${d#/proc/}
[ "$p" -gt 2 ] && [ "$p" != $$ ] || continue; read -r line < "$d/stat" 2>/dev/null || continue
s=\${line##*") "}; [ "\${s%% *}" = Z ] && continue; kill -KILL "$p" 2>/dev/null && found=1; done
[ -n "$found" ] || break; i=$((i + 1)); sleep 0.02; done`,
      "end the sandbox's processes",
    );
  }

  /** The root as the sandbox sees it, read from the host through its init's root. */
  get merged(): string {
    return `/proc/${this.#initPid}/root${this.root}`;
  }

  /** Runs `script` in the layers dir, as root in the sandbox's mount namespace; resolves its stdout. */
  #run(script: string, what: string, explain?: Explain): Promise<string> {
    const argv = [
      "--target",
      String(this.#initPid),
      "--mount",
      "--pid",
      "--",
      "sh",
      "-c",
      `cd -- "$LAYERS" || exit 1\n${script}`,
    ];
    return new Promise((resolve, reject) => {
      const child = spawn(this.#nsenter, argv, {
        stdio: ["ignore", "pipe", "pipe"],
        env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", ROOT: this.root, LAYERS: this.layers },
      });
      let out = "";
      let err = "";
      child.stdout.setEncoding("utf8").on("data", (text: string) => (out += text));
      child.stderr.setEncoding("utf8").on("data", (text: string) => (err = (err + text).slice(-2000)));
      child.once("error", (error) =>
        reject(new CheckpointError("failed", `Cannot ${what}: ${error.message}`, { cause: error, backend: BACKEND })),
      );
      child.once("close", (code) => {
        if (code === 0) return resolve(out);
        reject(
          explain?.(code) ??
            new CheckpointError("failed", `Cannot ${what}: the overlay's mount failed (${code}): ${err.trim()}`, {
              backend: BACKEND,
            }),
        );
      });
    });
  }
}

/** The mount of `stack` over the root, run in the layers dir (short relative names keep the options small). */
function mountLine(stack: OverlayStack): string {
  const lower = [...stack.chain.map(String), "lower"].join(":");
  const work = `w${stack.upper}`;
  return `mount -t overlay overlay -o ${OPTIONS},lowerdir=${lower},upperdir=${stack.upper},workdir=${work} -- "$ROOT"`;
}

/** The apparent size of what a layer holds (small: only what changed). */
function treeBytes(dir: string): number {
  let bytes = 0;
  for (const name of readdirSync(dir)) {
    const st = lstatSync(join(dir, name));
    bytes += st.isDirectory() ? treeBytes(join(dir, name)) : st.size;
  }
  return bytes;
}
