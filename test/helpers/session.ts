/**
 * A session for the tests of a file or describe block: opened before them, closed after them; with `scratch`, a
 * directory made inside the session (`mktemp -d`) and removed before the close.
 */

import { afterAll, beforeAll, expect } from "vitest";
import type { Environment } from "../../src/index.js";

export interface OpenSession {
  /** The session, once the tests run. */
  readonly session: Environment;
  /** The scratch directory inside the session (with `scratch: true`). */
  readonly dir: string;
}

export function useSession(open: () => Promise<Environment>, options: { scratch?: boolean } = {}): OpenSession {
  let session: Environment | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    session = await open();
    if (options.scratch !== true) return;
    dir = (await session.execute("mktemp -d")).output.trim();
    expect(dir).toMatch(/^\//);
  });
  afterAll(async () => {
    if (dir !== undefined) await session?.execute(`rm -rf ${dir}`);
    await session?.close();
  });
  return {
    get session(): Environment {
      return opened(session, "the session");
    },
    get dir(): string {
      return opened(dir, "the scratch directory (scratch: true)");
    },
  };
}

/** What a `beforeAll` made, read in a test; a clear error when read before (or without) it. */
export function opened<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is made before the tests run, and is read only by them`);
  return value;
}

/** A command's output, trimmed, after checking it exited 0 (its output is the failure's message). */
export async function runOk(env: Environment, command: string): Promise<string> {
  const result = await env.execute(command);
  expect(result.exitCode, result.output).toBe(0);
  return result.output.trim();
}
