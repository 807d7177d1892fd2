/**
 * Tool tests run on every backend of the compat suite (local always; the others
 * when CI enables them), each in a scratch directory inside the backend.
 */

import { afterAll, beforeAll } from "vitest";
import type { Environment } from "../../src/index.js";
import type { ToolDefinition, ToolResult } from "../../src/tools/shared/tool-definition.js";
import { runTool } from "../../src/tools/shared/tool-definition.js";
import { compatBackends } from "../compat/backends.js";
import { remoteStyleBackend } from "./remote-style.js";

/**
 * The backends the tools' own tests run on. Tools know only the Environment contract, which the compat suite
 * proves on every backend (test/compat/); their tests run on one backend of each way a call reaches bash: the local
 * fast and plain paths, the sandbox, the gateway, the SSH helper, the Engine API's exec, an SDK's exec (the Modal
 * stand-in) and a heredoc with the in-band marker (remote-style). All 17 took most of CI's time to say little more.
 * SHELLWRIGHT_TEST_TOOL_BACKENDS=all runs them on every compat backend.
 */
const TOOL_TEST_BACKENDS = new Set([
  "local",
  "local-plain",
  "local-sandbox",
  "gateway",
  "ssh",
  "docker-plain",
  "modal-plain",
  "remote-style",
]);

/** The entries of `backends` the tools' tests run on (TOOL_TEST_BACKENDS, or all of them). */
export function forToolTests<B extends { name: string }>(backends: readonly B[]): B[] {
  if (process.env.SHELLWRIGHT_TEST_TOOL_BACKENDS === "all") return [...backends];
  return backends.filter((backend) => TOOL_TEST_BACKENDS.has(backend.name));
}

/** The tool tests' backends (forToolTests), with real local bash reached the way remote backends are (remote-style.ts). */
export const toolBackends: ReadonlyArray<{ name: string; enabled: boolean; create: () => Promise<Environment> }> =
  forToolTests([
    ...compatBackends.map((backend) => ({
      name: backend.name,
      enabled: backend.enabled,
      create: () => backend.create(),
    })),
    { name: remoteStyleBackend.name, enabled: remoteStyleBackend.enabled, create: () => remoteStyleBackend.create() },
  ]);

export interface ToolFixture {
  session: Environment;
  /** A fresh directory inside the backend, removed afterwards. */
  scratch: string;
  call(tool: ToolDefinition, args: unknown): Promise<ToolResult>;
  /** Runs a command; fails the test when it exits non-zero. */
  sh(command: string, stdin?: string | Uint8Array): Promise<string>;
  /** The raw bytes of a file inside the backend, read independently of the tools. */
  rawBytes(path: string): Promise<Buffer>;
}

export function useToolFixture(create: () => Promise<Environment>): ToolFixture {
  const fixture = {} as ToolFixture;
  beforeAll(async () => {
    const session = await create();
    const scratch = (await session.execute("mktemp -d")).output.trim();
    if (!scratch.startsWith("/")) throw new Error(`mktemp -d failed: ${scratch}`);
    fixture.session = session;
    fixture.scratch = scratch;
    fixture.call = (tool, args) => runTool(tool, args, { session });
    fixture.sh = async (command, stdin) => {
      const result = await session.execute(command, stdin === undefined ? {} : { stdin });
      if (result.exitCode !== 0) throw new Error(`\`${command}\` exited ${result.exitCode}: ${result.output}`);
      return result.output;
    };
    // In 30 000-byte pieces, so a large file is not cut by the session's output limit.
    fixture.rawBytes = async (path) => {
      const size = Number((await fixture.sh(`wc -c < '${path}'`)).trim());
      const parts: Buffer[] = [];
      for (let offset = 0; offset === 0 || offset < size; offset += 30_000) {
        const result = await session.execute(`tail -c +${offset + 1} '${path}' | head -c 30000 | base64`);
        if (result.exitCode !== 0 || result.truncated)
          throw new Error(`could not read ${path}: ${result.output.slice(0, 200)}`);
        parts.push(Buffer.from(result.output, "base64"));
      }
      return Buffer.concat(parts);
    };
  });
  afterAll(async () => {
    await fixture.session?.execute(`rm -rf '${fixture.scratch}'`);
    await fixture.session?.close();
  });
  return fixture;
}
