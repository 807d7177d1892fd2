/** One `serve --api e2b` on the local backend per describe block, and a sandbox of it made with the real SDK. */

import { afterAll, beforeAll } from "vitest";
import { Sandbox, type SandboxOpts } from "e2b";
import type { Gateway } from "../../../src/index.js";
import { startTestGateway, TOKEN } from "../helpers.js";

export interface E2bFixture {
  readonly gateway: Gateway;
  /** The SDK's settings for this gateway. */
  readonly opts: SandboxOpts;
  readonly sandbox: Sandbox;
}

/** Registers the block's beforeAll and afterAll; read the fields inside tests. */
export function useE2bSandbox(fastPath: boolean): E2bFixture {
  const fixture = {} as { gateway: Gateway; opts: SandboxOpts; sandbox: Sandbox };
  beforeAll(async () => {
    fixture.gateway = await startTestGateway({ apis: ["e2b"], cwd: "/tmp", backend: { backend: "local", fastPath } });
    fixture.opts = {
      apiKey: TOKEN,
      apiUrl: fixture.gateway.url,
      sandboxUrl: fixture.gateway.url,
      requestTimeoutMs: 30_000,
    };
    fixture.sandbox = await Sandbox.create(fixture.opts);
  });
  afterAll(async () => fixture.gateway?.close());
  return fixture;
}
