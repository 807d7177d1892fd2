/**
 * envd's filesystem service and /files mounted on a loopback node:http server
 * for one real local-backend sandbox, the way the E2B API's router mounts
 * them: the service over Connect with the sandbox in the context, /files
 * with the access token checked (or a signed URL required without it).
 */

import { createClient, createContextValues, type Client, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport } from "@connectrpc/connect-node";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createEnvironment } from "../../../../src/index.js";
import { handleFiles } from "../../../../src/gateway/e2b/files.js";
import { filesystemService } from "../../../../src/gateway/e2b/filesystem/index.js";
import { Filesystem } from "../../../../src/gateway/e2b/gen/filesystem/filesystem_pb.js";
import { SANDBOX, type E2bSandbox } from "../../../../src/gateway/e2b/sandbox.js";

export interface Harness {
  url: string;
  sandbox: E2bSandbox;
  /** The directory the sandbox's home is (the test's scratch directory). */
  home: string;
  client: Client<typeof Filesystem>;
  close(): Promise<void>;
}

export async function startHarness(options: { maxUploadBytes?: number } = {}): Promise<Harness> {
  const home = realpathSync(mkdtempSync(join(tmpdir(), "sw-e2b-fs-")));
  const session = await createEnvironment({ backend: "local", cwd: home });
  const sandbox: E2bSandbox = {
    sandboxId: "sbx-test",
    session,
    accessToken: "access-token-0123456789abcdef",
    user: "user",
    homeDir: home,
  };
  const service = filesystemService();
  const connect = connectNodeAdapter({
    routes: (router: ConnectRouter) => router.service(Filesystem, service.impl),
    contextValues: () => createContextValues().set(SANDBOX, sandbox),
  });
  const server: Server = createServer((req, res) => {
    if (new URL(req.url ?? "/", "http://x").pathname === "/files") {
      void handleFiles(req, res, sandbox, {
        authenticated: req.headers["x-access-token"] === sandbox.accessToken,
        maxUploadBytes: options.maxUploadBytes ?? 8 * 1024 * 1024,
      });
      return;
    }
    connect(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = createClient(Filesystem, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
  return {
    url,
    sandbox,
    home,
    client,
    close: async () => {
      await service.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await session.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
