/**
 * Checkpoints of the shell state alone (docs/branching.md), for any backend
 * whose session keeps its snapshot in a file inside the backend: a
 * checkpoint is a copy of that file in a private directory next to it, made
 * through the session's own transport (`cp` in the backend); a rollback ends
 * the session's processes and renames the copy back over the snapshot; a
 * fork opens new sessions of the same config and writes this one's snapshot
 * into each. No file of the backend is held: say so, never pretend.
 */

import { randomBytes } from "node:crypto";
import type { CheckpointHost, CheckpointSupport } from "../../core/checkpoint-support.js";
import type { Environment } from "../../core/environment.js";
import { CheckpointError } from "../../core/errors.js";
import { shellQuote } from "../../core/script.js";
import type { Transport } from "../../core/transport.js";

/** The checkpoint's directory is gone from the backend. */
const EXIT_NOT_FOUND = 13;

export interface SnapshotCheckpointHooks {
  /** The session's transport: its runBash runs the copies, its tempDir holds them. */
  transport: Pick<Transport, "name" | "runBash" | "tempDir">;
  /** Ends the session's processes in the backend (and restarts its fast path). */
  endProcesses(): Promise<void>;
  /** A new session of the same config, starting in `cwd`, with its transport. */
  openChild(cwd: string): Promise<{ env: Environment; transport: ChildTransport }>;
}

type ChildTransport = Pick<Transport, "runBash">;

export class SnapshotCheckpoints implements CheckpointSupport {
  readonly workspaceRoot = undefined;
  readonly #hooks: SnapshotCheckpointHooks;
  readonly #dirName = `.shellwright-checkpoints-${randomBytes(6).toString("hex")}`;
  /** A save ran, so the directory may exist: until then close() has nothing to remove (and no call to make). */
  #saved = false;

  constructor(hooks: SnapshotCheckpointHooks) {
    this.#hooks = hooks;
  }

  /** Read when used: the transport's temp dir is valid once it started. */
  get #dir(): string {
    return `${this.#hooks.transport.tempDir}/${this.#dirName}`;
  }

  async save(host: CheckpointHost, id: string): Promise<undefined> {
    const [dir, saved] = [shellQuote(this.#dir), shellQuote(`${this.#dir}/${id}`)];
    this.#saved = true;
    await this.#run(
      "take a checkpoint",
      `umask 077; mkdir -p -- ${dir} && mkdir -- ${saved} || exit 1\n` +
        `cp -- ${shellQuote(host.paths.snapshot)} ${saved}/snapshot || { rm -rf -- ${saved}; exit 1; }`,
    );
    return undefined;
  }

  async restore(host: CheckpointHost, id: string): Promise<void> {
    const what = "roll back";
    const saved = shellQuote(`${this.#dir}/${id}`);
    const pending = shellQuote(`${host.paths.snapshot}.rollback-${randomBytes(6).toString("hex")}`);
    await this.#run(what, `[ -d ${saved} ] || exit ${EXIT_NOT_FOUND}\ncp -- ${saved}/snapshot ${pending}`);
    // Past this point nothing is aborted: what the rollback ends cannot be brought back.
    try {
      await this.#hooks.endProcesses();
    } catch (error) {
      await this.#run(what, `rm -f -- ${pending}`).catch(() => undefined);
      throw wrap(error, what, this.#hooks.transport.name);
    }
    await this.#run(what, `mv -f -- ${pending} ${shellQuote(host.paths.snapshot)}`);
  }

  async release(id: string): Promise<void> {
    await this.#run("release a checkpoint", `rm -rf -- ${shellQuote(`${this.#dir}/${id}`)}`);
  }

  async fork(host: CheckpointHost): Promise<Environment> {
    const what = "fork";
    const snapshot = await this.#run(what, `cat -- ${shellQuote(host.paths.snapshot)}`);
    const child = await this.#hooks.openChild(host.cwd);
    try {
      const target = shellQuote(child.env.paths.snapshot);
      // Through the child's transport (it may be another machine); renamed into place whole, so that a fast
      // path there sees a new file and reloads it.
      const script = `umask 077; cat > ${target}.fork && mv -f -- ${target}.fork ${target}`;
      await this.#run(what, script, snapshot, child.transport);
      return child.env;
    } catch (error) {
      await child.env.close().catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    if (!this.#saved) return;
    await this.#run("close", `rm -rf -- ${shellQuote(this.#dir)}`).catch(() => undefined);
  }

  /** One short script in the backend (this session's, or `via` a child's own transport); its output. */
  async #run(what: string, script: string, stdin?: Uint8Array, via?: ChildTransport): Promise<Buffer> {
    const backend = this.#hooks.transport.name;
    let code: number;
    const chunks: Buffer[] = [];
    try {
      const handle = (via ?? this.#hooks.transport).runBash(script, {
        cleanEnv: false,
        ...(stdin === undefined ? {} : { stdin }),
      });
      for await (const chunk of handle.output) chunks.push(Buffer.from(chunk));
      code = await handle.wait();
    } catch (error) {
      throw wrap(error, what, backend);
    }
    const output = Buffer.concat(chunks);
    if (code === EXIT_NOT_FOUND)
      throw new CheckpointError(
        "not_found",
        `Cannot ${what}: the checkpoint has no files left in the ${backend} backend`,
        {
          backend,
        },
      );
    if (code !== 0)
      throw new CheckpointError(
        "failed",
        `Cannot ${what}: the copy in the ${backend} backend exited ${code}: ${output.toString("utf8").trim()}`,
        { backend },
      );
    return output;
  }
}

function wrap(error: unknown, what: string, backend: string): unknown {
  if (error instanceof CheckpointError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new CheckpointError("failed", `Cannot ${what}: ${message}`, { cause: error, backend });
}
