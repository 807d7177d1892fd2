/**
 * The real `e2b` SDK against `serve --api e2b` (the router, the control API,
 * the sandbox table): sandbox.files, signed URLs that carry no sandbox id,
 * the body limit, another sandbox's token, and a watch that ends with its
 * sandbox.
 */

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { Code, createClient, type ConnectError } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { FileNotFoundError, FilesystemEventType, Sandbox, type SandboxOpts } from "e2b";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Filesystem } from "../../../../src/gateway/e2b/gen/filesystem/filesystem_pb.js";
import type { Gateway } from "../../../../src/index.js";
import { scratchDir, startTestGateway, TOKEN } from "../../helpers.js";

const LIMIT = 256 * 1024;
let gateway: Gateway;
let opts: SandboxOpts;
let home: { path: string; remove(): void };

beforeAll(async () => {
  home = scratchDir();
  gateway = await startTestGateway({ apis: ["e2b", "shellwright"], cwd: home.path, maxBodyBytes: LIMIT });
  opts = { apiKey: TOKEN, apiUrl: gateway.url, sandboxUrl: gateway.url, requestTimeoutMs: 30_000 };
});
afterAll(async () => {
  await gateway?.close();
  home?.remove();
});

describe("e2b SDK against serve: sandbox.files", () => {
  it("writes, reads, lists, makes, renames, removes and stats in the sandbox's home", async () => {
    const sandbox = await Sandbox.create(opts);
    try {
      const info = await sandbox.files.write("serve/a.txt", "from the sdk");
      expect(info.path).toBe(`${home.path}/serve/a.txt`);
      expect(readFileSync(`${home.path}/serve/a.txt`, "utf8")).toBe("from the sdk");
      expect(await sandbox.files.read("serve/a.txt")).toBe("from the sdk");
      await sandbox.files.write("serve/zipped.txt", "zip ".repeat(100), { gzip: true });
      expect(await sandbox.files.read("serve/zipped.txt", { gzip: true })).toBe("zip ".repeat(100));
      const many = await sandbox.files.write([
        { path: "serve/m1.txt", data: "1" },
        { path: "serve/m2.txt", data: "2" },
      ]);
      expect(many.map((f) => f.name)).toEqual(["m1.txt", "m2.txt"]);
      expect(await sandbox.files.makeDir("serve/d/e")).toBe(true);
      expect(await sandbox.files.makeDir("serve/d/e")).toBe(false);
      expect((await sandbox.files.list("serve")).map((e) => e.name)).toEqual([
        "a.txt",
        "d",
        "m1.txt",
        "m2.txt",
        "zipped.txt",
      ]);
      expect((await sandbox.files.rename("serve/a.txt", "serve/d/b.txt")).path).toBe(`${home.path}/serve/d/b.txt`);
      expect(await sandbox.files.exists("serve/a.txt")).toBe(false);
      expect(await sandbox.files.getInfo("serve/d/b.txt")).toMatchObject({ type: "file", size: 12 });
      await expect(sandbox.files.getInfo("serve/none")).rejects.toBeInstanceOf(FileNotFoundError);
      await expect(sandbox.files.read("serve/none")).rejects.toBeInstanceOf(FileNotFoundError);
      await sandbox.files.remove("serve");
      expect(existsSync(`${home.path}/serve`)).toBe(false);
    } finally {
      await sandbox.kill();
    }
  }, 60_000);

  it("refuses an upload over the server's body limit and leaves nothing behind", async () => {
    const sandbox = await Sandbox.create(opts);
    try {
      await sandbox.files.write("limit/kept.txt", "old");
      await expect(sandbox.files.write("limit/kept.txt", new Uint8Array(LIMIT + 1).buffer)).rejects.toThrow(
        /larger than this server's limit of 262144 bytes/,
      );
      expect(readFileSync(`${home.path}/limit/kept.txt`, "utf8")).toBe("old");
      expect(readdirSync(`${home.path}/limit`)).toEqual(["kept.txt"]);
    } finally {
      await sandbox.kill();
    }
  }, 60_000);

  it("serves a signed URL with no sandbox id (a plain link), and refuses another sandbox's token", async () => {
    const [mine, other] = await Promise.all([
      Sandbox.create({ ...opts, secure: true }),
      Sandbox.create({ ...opts, secure: true }),
    ]);
    try {
      await mine.files.write("link.txt", "shared by link");
      const url = await mine.downloadUrl("link.txt", { useSignatureExpiration: 60 });
      expect(await (await fetch(url)).text()).toBe("shared by link");
      const forged = new URL(url);
      forged.searchParams.set("path", "other.txt");
      expect(await (await fetch(forged)).json()).toEqual({ code: 401, message: "invalid signature" });
      const stolen = await fetch(`${gateway.url}/files?path=link.txt`, {
        headers: {
          "e2b-sandbox-id": mine.sandboxId,
          "x-access-token": (other as unknown as { envdAccessToken: string }).envdAccessToken,
        },
      });
      expect(stolen.status).toBe(401);
    } finally {
      await Promise.all([mine.kill(), other.kill()]);
    }
  }, 60_000);

  it("keeps each sandbox's watchers its own: another sandbox's id is not found", async () => {
    const [a, b] = await Promise.all([Sandbox.create(opts), Sandbox.create(opts)]);
    const clientOf = (sandbox: Sandbox) =>
      createClient(
        Filesystem,
        createConnectTransport({
          baseUrl: gateway.url,
          httpVersion: "1.1",
          interceptors: [
            (next) => (request) => {
              request.header.set("e2b-sandbox-id", sandbox.sandboxId);
              request.header.set("x-access-token", (sandbox as unknown as { envdAccessToken: string }).envdAccessToken);
              return next(request);
            },
          ],
        }),
      );
    try {
      await a.files.makeDir("owned");
      const { watcherId } = await clientOf(a).createWatcher({ path: "owned" });
      const error = await clientOf(b)
        .getWatcherEvents({ watcherId })
        .catch((e: unknown) => e);
      expect((error as ConnectError).code).toBe(Code.NotFound);
      expect(await clientOf(a).getWatcherEvents({ watcherId })).toMatchObject({ events: [] });
      await clientOf(a).removeWatcher({ watcherId });
    } finally {
      await Promise.all([a.kill(), b.kill()]);
    }
  }, 60_000);

  it("watches a directory until the sandbox is killed, then ends the watch with an error", async () => {
    const sandbox = await Sandbox.create(opts);
    await sandbox.files.makeDir("watched");
    let seen!: () => void;
    const written = new Promise<void>((resolve) => (seen = resolve));
    let exited!: (error: Error | undefined) => void;
    const exit = new Promise<Error | undefined>((resolve) => (exited = resolve));
    const handle = await sandbox.files.watchDir(
      "watched",
      (event) => {
        if (event.type === FilesystemEventType.CREATE && event.name === "new.txt") seen();
      },
      { onExit: (error) => exited(error) },
    );
    await sandbox.files.write("watched/new.txt", "x");
    await written;
    await sandbox.kill();
    expect(await exit).toBeInstanceOf(Error);
    await handle.stop();
  }, 60_000);
});
