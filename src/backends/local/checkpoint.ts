/**
 * Checkpoints on the local backend without the sandbox (docs/branching.md).
 *
 * A checkpoint is a private directory under the session's state dir (0700):
 * a copy of the snapshot and, with a declared workspace, a copy of it made by
 * `cp --reflink=auto -a` (shared blocks where the filesystem can, a plain
 * copy elsewhere). A rollback copies the saved workspace into a hidden
 * sibling of the root first, and only then, with nothing left to fail but
 * renames, swaps it in: rename root aside, rename the copy in, rename the
 * snapshot in, done synchronously one after the other so no call and no
 * other task of this process can see a mix.
 */

import { spawn } from "node:child_process";
import { existsSync, lstatSync, realpathSync, renameSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import type { WorkspaceCopy } from "../../core/checkpoint.js";
import type { CheckpointHost, CheckpointSupport } from "../../core/checkpoint-support.js";
import type { Environment } from "../../core/environment.js";
import { checkAborted } from "../../core/branches.js";
import { CheckpointError } from "../../core/errors.js";
import { quoteCwd } from "../../core/quote.js";
import { SNAPSHOT_CWD_VARIABLE } from "../../core/script.js";
import { inside, type WorkspaceOptions } from "./workspace-config.js";
import { copyStateFile, makePrivateDir, withDir } from "./state-files.js";
import { forgetDir, recordDir } from "./checkpoint-dirs.js";

const BACKEND = "local";

/** What the checkpoints need of their session's transport and backend. */
export interface LocalCheckpointHooks {
  /** The session's state dir (valid once the transport started). */
  stateDir(): string;
  /** Ends the session's processes and restarts its fast path. */
  endProcesses(): Promise<void>;
  /** Tells the (new) fast path which snapshot to start from. */
  prepareFastPath(snapshot: string): void;
  /** Opens a child session with this workspace root (owned: removed at its close) starting in `cwd`. */
  openChild(
    workspace: string | undefined,
    cwd: string,
  ): Promise<Environment & { readonly paths: { snapshot: string } }>;
}

export class LocalCheckpoints implements CheckpointSupport {
  readonly #workspace: WorkspaceOptions | undefined;
  readonly #hooks: LocalCheckpointHooks;
  /** A fork's copy of its parent's workspace, which this session removes at close. */
  readonly #ownsWorkspace: boolean;
  /** Old workspaces being removed after a rollback; close waits for them. */
  readonly #removing = new Set<Promise<void>>();

  constructor(workspace: WorkspaceOptions | undefined, hooks: LocalCheckpointHooks, ownsWorkspace = false) {
    this.#workspace = workspace;
    this.#hooks = hooks;
    this.#ownsWorkspace = ownsWorkspace;
  }

  get workspaceRoot(): string | undefined {
    return this.#workspace?.root;
  }

  #dir(id: string): string {
    return join(this.#hooks.stateDir(), "checkpoints", id);
  }

  async save(host: CheckpointHost, id: string, signal: AbortSignal | undefined): Promise<WorkspaceCopy | undefined> {
    const what = "take a checkpoint";
    const state = this.#hooks.stateDir();
    try {
      withDir(state, [], what, (top) => makePrivateDir(top, "checkpoints", what, false));
      withDir(state, ["checkpoints"], what, (all) => makePrivateDir(all, id, what, true));
    } catch (error) {
      throw wrap(error, what);
    }
    try {
      withDir(state, ["checkpoints", id], what, (dir) => copyStateFile(host.paths.snapshot, `${dir}/snapshot`, what));
      if (this.#workspace === undefined) return undefined;
      const bytes = await this.#measure(what, signal);
      // No sandbox with a workspace (workspace-config.ts): no command can have planted links here.
      await copyTree(this.#workspace.root, join(this.#dir(id), "workspace"), signal, what);
      return { root: this.#workspace.root, bytes };
    } catch (error) {
      await this.release(id).catch(() => undefined);
      throw wrap(error, what);
    }
  }

  async restore(host: CheckpointHost, id: string, signal: AbortSignal | undefined): Promise<void> {
    const dir = this.#dir(id);
    if (!existsSync(dir))
      throw new CheckpointError("not_found", `Checkpoint ${id} has no files left in ${dir}`, { backend: BACKEND });
    const tag = randomBytes(6).toString("hex");
    const snapshot = `${host.paths.snapshot}.rollback-${tag}`;
    const root = this.#workspace?.root;
    const fresh = root === undefined ? undefined : join(dirname(root), `.${basename(root)}.shellwright-restore-${tag}`);
    if (fresh !== undefined) recordDir(this.#hooks.stateDir(), fresh);
    try {
      withDir(this.#hooks.stateDir(), ["checkpoints", id], "roll back", (saved) =>
        copyStateFile(`${saved}/snapshot`, snapshot, "roll back"),
      );
      if (fresh !== undefined) await copyTree(join(dir, "workspace"), fresh, signal, "roll back");
      checkAborted(signal, "roll back", BACKEND);
    } catch (error) {
      rmSync(snapshot, { force: true });
      this.#remove(fresh);
      throw wrap(error, "roll back");
    }
    // Past this point nothing is aborted: what the rollback ends cannot be brought back.
    try {
      await this.#hooks.endProcesses();
      if (root !== undefined && fresh !== undefined) {
        // A removed workspace is the case a rollback is most wanted for: nothing to move aside.
        if (lstatSync(root, { throwIfNoEntry: false }) === undefined) renameSync(fresh, root);
        else {
          const old = join(dirname(root), `.${basename(root)}.shellwright-old-${tag}`);
          recordDir(this.#hooks.stateDir(), old);
          swap(root, fresh, old);
          this.#removeLater(old);
        }
      }
      renameSync(snapshot, host.paths.snapshot);
    } catch (error) {
      rmSync(snapshot, { force: true });
      this.#remove(fresh);
      throw wrap(error, "roll back");
    }
    if (fresh !== undefined) forgetDir(this.#hooks.stateDir(), fresh);
    this.#hooks.prepareFastPath(host.paths.snapshot);
  }

  async release(id: string): Promise<void> {
    const all = join(this.#hooks.stateDir(), "checkpoints");
    // Never through a `checkpoints` a command replaced by a symlink: that would remove `id` wherever it points.
    if (lstatSync(all, { throwIfNoEntry: false })?.isDirectory() !== true) return;
    await rm(join(all, id), { recursive: true, force: true });
  }

  async fork(host: CheckpointHost, signal: AbortSignal | undefined): Promise<Environment> {
    const root = this.#workspace?.root;
    let copy: string | undefined;
    let cwd = host.cwd;
    if (root !== undefined) {
      await this.#measure("fork", signal);
      copy = `${root}.fork-${randomBytes(6).toString("hex")}`;
      recordDir(this.#hooks.stateDir(), copy);
      try {
        await copyTree(root, copy, signal, "fork");
      } catch (error) {
        this.#remove(copy);
        throw wrap(error, "fork");
      }
      if (inside(cwd, root)) cwd = copy + cwd.slice(root.length);
    }
    let child: Awaited<ReturnType<LocalCheckpointHooks["openChild"]>> | undefined;
    try {
      child = await this.#hooks.openChild(copy, cwd);
      // The parent's state, renamed into place: the child's fast path sees a new inode and reloads it.
      const pending = `${child.paths.snapshot}.fork`;
      copyStateFile(host.paths.snapshot, pending, "fork", (state) =>
        copy === undefined ? state : withCwd(state, cwd),
      );
      renameSync(pending, child.paths.snapshot);
      // From now on the child removes its copy at close, and --prune finds it through the child's record.
      if (copy !== undefined) {
        recordDir(dirname(child.paths.snapshot), copy);
        forgetDir(this.#hooks.stateDir(), copy);
      }
      return child;
    } catch (error) {
      if (child !== undefined) await child.close().catch(() => undefined);
      this.#remove(copy);
      throw wrap(error, "fork");
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#removing]);
    rmSync(join(this.#hooks.stateDir(), "checkpoints"), { recursive: true, force: true });
    if (this.#ownsWorkspace && this.#workspace !== undefined)
      await rm(this.#workspace.root, { recursive: true, force: true });
  }

  /** The workspace's size, refused past workspaceMaxBytes before anything is copied. */
  async #measure(what: string, signal: AbortSignal | undefined): Promise<number> {
    const { root, maxBytes } = this.#workspace!;
    const inStateDir = realpathSync(this.#hooks.stateDir());
    if (inside(inStateDir, root))
      throw new CheckpointError(
        "failed",
        `Cannot ${what}: the state dir ${inStateDir} is inside the workspace ${root}`,
        {
          backend: BACKEND,
        },
      );
    const out = await run("du", ["-s", "-b", "--", root], signal, what);
    const bytes = Number.parseInt(out, 10);
    if (!Number.isFinite(bytes))
      throw new CheckpointError("failed", `Cannot ${what}: du printed ${JSON.stringify(out)}`, { backend: BACKEND });
    if (bytes > maxBytes)
      throw new CheckpointError(
        "too_large",
        `Cannot ${what}: the workspace ${root} holds ${bytes} bytes, more than workspaceMaxBytes (${maxBytes}); raise workspaceMaxBytes or remove files`,
        { backend: BACKEND },
      );
    return bytes;
  }

  /** Removes a dir this session made beside the root, and its record. */
  #remove(dir: string | undefined): void {
    if (dir === undefined) return;
    rmSync(dir, { recursive: true, force: true });
    forgetDir(this.#hooks.stateDir(), dir);
  }

  #removeLater(dir: string): void {
    const removal = rm(dir, { recursive: true, force: true })
      .then(() => forgetDir(this.#hooks.stateDir(), dir))
      .catch(() => undefined);
    this.#removing.add(removal);
    void removal.finally(() => this.#removing.delete(removal));
  }
}

/**
 * The parent's state with the child's cwd: the state names its cwd (script.ts), and the parent's lies in the
 * parent's workspace, where the child's first command would otherwise run.
 */
function withCwd(state: Buffer, cwd: string): Buffer {
  // Byte for byte (latin1): a variable may hold bytes that are not UTF-8.
  const lines = state.toString("latin1").split("\n");
  // The last such line: the dump's own, after every function body and alias that could hold one.
  const at = lines.findLastIndex((line) => line.startsWith(`${SNAPSHOT_CWD_VARIABLE}=`));
  if (at >= 0) lines[at] = Buffer.from(`${SNAPSHOT_CWD_VARIABLE}=${quoteCwd(cwd)}`).toString("latin1");
  return Buffer.from(lines.join("\n"), "latin1");
}

/**
 * Two renames back to back, with no await between them: only a SIGKILL of
 * this process landing between the two syscalls can stop it halfway, and
 * then the old workspace is whole at `old` and the checkpoint's whole at `fresh`.
 */
function swap(root: string, fresh: string, old: string): void {
  renameSync(root, old);
  try {
    renameSync(fresh, root);
  } catch (error) {
    renameSync(old, root);
    rmSync(fresh, { recursive: true, force: true });
    throw wrap(error, "roll back");
  }
}

/** Copies a tree with everything bash's files can carry (modes, times, symlinks, hard links, sparse files). */
async function copyTree(from: string, to: string, signal: AbortSignal | undefined, what: string): Promise<void> {
  await run("cp", ["--reflink=auto", "-a", "--", from, to], signal, what);
}

function run(program: string, args: string[], signal: AbortSignal | undefined, what: string): Promise<string> {
  checkAborted(signal, what, BACKEND);
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ["ignore", "pipe", "pipe"], ...(signal ? { signal } : {}) });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (out += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (err = (err + text).slice(-2000)));
    child.once("error", (error) => {
      if (signal?.aborted === true)
        reject(new CheckpointError("aborted", `Cannot ${what}: aborted by its signal`, { backend: BACKEND }));
      else
        reject(
          new CheckpointError("failed", `Cannot ${what}: ${program} failed: ${error.message}`, {
            cause: error,
            backend: BACKEND,
          }),
        );
    });
    child.once("close", (code) => {
      if (code === 0) resolve(out);
      else
        reject(
          new CheckpointError("failed", `Cannot ${what}: ${program} exited ${code}: ${err.trim()}`, {
            backend: BACKEND,
          }),
        );
    });
  });
}

function wrap(error: unknown, what: string): unknown {
  if (error instanceof CheckpointError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new CheckpointError("failed", `Cannot ${what}: ${message}`, { cause: error, backend: BACKEND });
}
