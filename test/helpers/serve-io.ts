/** What `serve()` (src/cli/serve.ts) writes and reads, captured, and a stop for its run. */

import type { ServeIo } from "../../src/cli/serve.js";

export function serveIo(env: NodeJS.ProcessEnv = {}): ServeIo & { out: string[]; err: string[]; stop(): void } {
  const out: string[] = [];
  const err: string[] = [];
  const controller = new AbortController();
  return {
    env,
    out,
    err,
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    signal: controller.signal,
    stop: () => controller.abort(),
  };
}
