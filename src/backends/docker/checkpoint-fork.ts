/**
 * A docker session's fork (docs/branching.md): the whole container is
 * committed once (`docker commit`) into an
 * image labelled with the parent session's id, and each child is a new
 * container of the same config from that image, given the parent's
 * snapshot. The image goes when the last container made from it is gone
 * (each child tries at its close; the engine refuses while another uses it).
 */

import type { Environment } from "../../core/environment.js";
import { CheckpointError } from "../../core/errors.js";
import { isAborted, runScript, succeeded } from "./checkpoint-exec.js";
import { PUT } from "./checkpoint-scripts.js";
import { engineMessage, type EngineApi } from "./engine.js";

/** The label on a fork's image (and so on its children's containers): the parent session's id. */
export const FORK_LABEL = "shellwright.fork-of";
/** Children opened at once: each is a `docker run` and a login, which dockerd and the CPU serve a few at a time. */
const OPEN_AT_ONCE = 8;
/** A commit copies the container's whole writable layer. */
const COMMIT_TIMEOUT_MS = 600_000;
const BACKEND = "docker";

export interface ForkChild {
  env: Environment;
  /** The child's container, where its snapshot is written. */
  containerId: string;
}

export interface ForkRequest {
  engine: EngineApi;
  containerId: string;
  sessionId: string;
  snapshot: string;
  cwd: string;
  count: number;
  signal: AbortSignal | undefined;
  openChild(image: string, cwd: string): Promise<ForkChild>;
}

/** `count` children from one commit of the container; on any failure none is left open, nor the image. */
export async function forkContainers(request: ForkRequest): Promise<Environment[]> {
  const { engine, signal } = request;
  const what = "fork";
  const snapshot = succeededBytes(
    await runScript(engine, request.containerId, 'cat -- "$1"', [request.snapshot], { signal, what }),
    what,
  );
  const image = await commit(engine, request.containerId, request.sessionId, signal);
  const children: ForkChild[] = [];
  let next = 0;
  let failed = false;
  const worker = async () => {
    // After one failure no new child is started; the ones opening meanwhile are waited for and closed below.
    while (next < request.count && !failed && !isAborted(signal)) {
      next++;
      const child = await request.openChild(image, request.cwd);
      children.push(child);
      // The parent's state, renamed into place: the child's fast path sees a new inode and reloads it.
      const put = await runScript(engine, child.containerId, PUT, [child.env.paths.snapshot], {
        stdin: snapshot,
        what,
      });
      succeeded(put, what);
    }
  };
  const settled = await Promise.allSettled(
    Array.from({ length: Math.min(OPEN_AT_ONCE, request.count) }, () =>
      worker().catch((error: unknown) => {
        failed = true;
        throw error;
      }),
    ),
  );
  const rejected = settled.find((result) => result.status === "rejected");
  if (rejected === undefined && !isAborted(signal)) return children.map((child) => child.env);
  await Promise.allSettled(children.map((child) => child.env.close()));
  await removeForkImage(engine, image).catch(() => undefined);
  if (rejected === undefined) throw abortedError();
  const error: unknown = rejected.reason;
  throw error instanceof CheckpointError
    ? error
    : new CheckpointError("failed", `Cannot fork: ${(error as Error).message}`, { cause: error, backend: BACKEND });
}

async function commit(
  engine: EngineApi,
  containerId: string,
  sessionId: string,
  signal: AbortSignal | undefined,
): Promise<string> {
  if (isAborted(signal)) throw abortedError();
  const label = encodeURIComponent(`LABEL ${FORK_LABEL}=${sessionId}`);
  // Not paused: the engine's pause froze the container while an exec was starting in it (the helper of a
  // session forked as soon as it opened), which failed that exec and at times left the container frozen for
  // good, every engine call on it hanging (dockerd 20.10 with runc). No command of the session runs during a
  // fork; a background process writing meanwhile can leave a file half-written in the children (docs/branching.md).
  const response = await engine.request(
    "POST",
    `/commit?container=${containerId}&pause=false&changes=${label}`,
    undefined,
    COMMIT_TIMEOUT_MS,
  );
  const id = (response.json as { Id?: unknown } | undefined)?.Id;
  if (response.status !== 201 || typeof id !== "string")
    throw new CheckpointError("failed", `Cannot fork: docker commit failed: ${engineMessage(response.text)}`, {
      backend: BACKEND,
    });
  if (isAborted(signal)) {
    await removeForkImage(engine, id).catch(() => undefined);
    throw abortedError();
  }
  return id;
}

/**
 * Removes a fork's image unless a container (or a child fork's image) still
 * uses it; then its parent, when that is a fork's image too and now unused.
 */
export async function removeForkImage(engine: EngineApi, image: string): Promise<void> {
  const info = await engine.request("GET", `/images/${encodeURIComponent(image)}/json`);
  if (info.status === 404) return;
  const { Parent: parent } = (info.json ?? {}) as { Parent?: string };
  const removed = await engine.request("DELETE", `/images/${encodeURIComponent(image)}`);
  // 409: still in use; the last container or image that uses it removes it.
  if (removed.status !== 200 || parent === undefined || parent === "") return;
  const above = await engine.request("GET", `/images/${encodeURIComponent(parent)}/json`);
  const labels = (above.json as { Config?: { Labels?: Record<string, string> | null } } | undefined)?.Config?.Labels;
  if (labels?.[FORK_LABEL] !== undefined) await removeForkImage(engine, parent);
}

function succeededBytes(result: { code: number; output: Buffer }, what: string): Buffer {
  if (result.code === 0) return result.output;
  return Buffer.from(succeeded(result, what));
}

function abortedError(): CheckpointError {
  return new CheckpointError("aborted", "Cannot fork: aborted by its signal", { backend: BACKEND });
}
