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

/** Every compat backend, plus real local bash reached the way remote backends are (see remote-style.ts). */
export const toolBackends: ReadonlyArray<{ name: string; enabled: boolean; create: () => Promise<Environment> }> = [
  ...compatBackends.map((backend) => ({
    name: backend.name,
    enabled: backend.enabled,
    create: () => backend.create(),
  })),
  { name: remoteStyleBackend.name, enabled: remoteStyleBackend.enabled, create: () => remoteStyleBackend.create() },
];

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
