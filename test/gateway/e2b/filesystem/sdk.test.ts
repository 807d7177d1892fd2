/**
 * E2B's own SDK (npm `e2b`) on the filesystem service and /files, pointed at
 * them with its own `sandboxUrl` setting. The SDK's Sandbox is built directly
 * for a sandbox the harness holds (the control API that creates one is
 * tested with the router); every call below is the SDK's real request.
 */

import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { FileNotFoundError, FilesystemEventType, InvalidArgumentError, Sandbox, type FilesystemEvent } from "e2b";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "./harness.js";

let h: Harness;
let sandbox: Sandbox;
beforeAll(async () => {
  h = await startHarness();
  const Open = Sandbox as unknown as new (opts: Record<string, unknown>) => Sandbox;
  sandbox = new Open({
    sandboxId: h.sandbox.sandboxId,
    envdAccessToken: h.sandbox.accessToken,
    envdVersion: "0.6.4",
    sandboxUrl: h.url,
    apiKey: "e2b_unused",
  });
}, 30_000);
afterAll(async () => h?.close());

describe("e2b SDK: sandbox.files", () => {
  it("writes and reads text, bytes, streams and gzip, relative paths at the home", async () => {
    const info = await sandbox.files.write("sdk/hello.txt", "hello from the sdk");
    expect(info).toMatchObject({ name: "hello.txt", path: `${h.home}/sdk/hello.txt`, type: "file" });
    expect(await sandbox.files.read("sdk/hello.txt")).toBe("hello from the sdk");
    const bytes = new Uint8Array(200_000).map((_, i) => (i * 31) % 256);
    await sandbox.files.write(`${h.home}/sdk/bytes.bin`, bytes.buffer);
    expect(Buffer.from(await sandbox.files.read("sdk/bytes.bin", { format: "bytes" })).equals(Buffer.from(bytes))).toBe(
      true,
    );
    await sandbox.files.write("sdk/zipped.txt", "zipped ".repeat(500), { gzip: true });
    expect(await sandbox.files.read("sdk/zipped.txt", { gzip: true })).toBe("zipped ".repeat(500));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("streamed "));
        controller.enqueue(new TextEncoder().encode("upload"));
        controller.close();
      },
    });
    await sandbox.files.write("sdk/streamed.txt", stream);
    const chunks: Uint8Array[] = [];
    for await (const chunk of (await sandbox.files.read("sdk/streamed.txt", {
      format: "stream",
    })) as unknown as AsyncIterable<Uint8Array>)
      chunks.push(chunk);
    expect(Buffer.concat(chunks).toString()).toBe("streamed upload");
    writeFileSync(`${h.home}/sdk/empty`, "");
    expect(await sandbox.files.read("sdk/empty")).toBe("");
  });

  it("writes several files in one call", async () => {
    const infos = await sandbox.files.write([
      { path: "multi/1.txt", data: "one" },
      { path: `${h.home}/multi/2.txt`, data: new Blob(["two"]) },
    ]);
    expect(infos.map((i) => i.path)).toEqual([`${h.home}/multi/1.txt`, `${h.home}/multi/2.txt`]);
    expect(readFileSync(`${h.home}/multi/2.txt`, "utf8")).toBe("two");
  });

  it("lists with depth, makes directories, renames, removes, answers exists and getInfo", async () => {
    expect(await sandbox.files.makeDir("tree/a/b")).toBe(true);
    expect(await sandbox.files.makeDir("tree/a/b")).toBe(false);
    await sandbox.files.write("tree/f.txt", "12345");
    expect((await sandbox.files.list("tree")).map((e) => [e.name, e.type])).toEqual([
      ["a", "dir"],
      ["f.txt", "file"],
    ]);
    expect((await sandbox.files.list("tree", { depth: 3 })).map((e) => e.path.slice(h.home.length))).toEqual([
      "/tree/a",
      "/tree/a/b",
      "/tree/f.txt",
    ]);
    await expect(sandbox.files.list("tree", { depth: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    const info = await sandbox.files.getInfo("tree/f.txt");
    expect(info).toMatchObject({ name: "f.txt", type: "file", size: 5, owner: expect.any(String) });
    expect(info.permissions).toMatch(/^-rw/);
    expect(info.modifiedTime).toBeInstanceOf(Date);
    symlinkSync("f.txt", `${h.home}/tree/link`);
    expect(await sandbox.files.getInfo("tree/link")).toMatchObject({
      type: "symlink",
      symlinkTarget: `${h.home}/tree/f.txt`,
    });
    const moved = await sandbox.files.rename("tree/f.txt", "tree/g.txt");
    expect(moved).toMatchObject({ name: "g.txt", path: `${h.home}/tree/g.txt` });
    expect(await sandbox.files.exists("tree/f.txt")).toBe(false);
    expect(await sandbox.files.exists("tree/g.txt")).toBe(true);
    await expect(sandbox.files.rename("tree/none", "tree/x")).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(sandbox.files.getInfo("tree/none")).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(sandbox.files.read("tree/none")).rejects.toBeInstanceOf(FileNotFoundError);
    await sandbox.files.remove("tree");
    await sandbox.files.remove("tree");
    expect(existsSync(`${h.home}/tree`)).toBe(false);
  });

  it("watches a directory: a write below it, with its entry", async () => {
    mkdirSync(`${h.home}/watched/nested`, { recursive: true });
    writeFileSync(`${h.home}/watched/nested/w.txt`, "before");
    let resolve!: (event: FilesystemEvent) => void;
    const seen = new Promise<FilesystemEvent>((r) => (resolve = r));
    const handle = await sandbox.files.watchDir(
      "watched",
      (event) => {
        if (event.type === FilesystemEventType.WRITE) resolve(event);
      },
      { recursive: true, includeEntry: true },
    );
    await sandbox.files.write("watched/nested/w.txt", "after, longer");
    const event = await seen;
    expect(event.name).toBe("nested/w.txt");
    expect(event.entry?.path).toBe(`${h.home}/watched/nested/w.txt`);
    await handle.stop();
    await expect(sandbox.files.watchDir("no-such-dir", () => undefined)).rejects.toBeInstanceOf(FileNotFoundError);
  }, 20_000);

  it("reports new entries as inotify does: CREATE (then WRITE for content), never WRITE for a directory", async () => {
    mkdirSync(`${h.home}/grown`);
    const events: string[] = [];
    const waiters: { want: string; resolve: () => void }[] = [];
    const seen = (want: string): Promise<void> =>
      events.includes(want) ? Promise.resolve() : new Promise((resolve) => waiters.push({ want, resolve }));
    const handle = await sandbox.files.watchDir(
      "grown",
      (event) => {
        const text = `${event.type} ${event.name}`;
        events.push(text);
        for (const waiter of waiters) if (waiter.want === text) waiter.resolve();
      },
      { recursive: true },
    );
    try {
      await sandbox.files.makeDir("grown/nested");
      await seen("create nested");
      await sandbox.files.write("grown/nested/f.txt", "content");
      await sandbox.files.write("grown/empty.txt", "");
      await Promise.all([seen("create nested/f.txt"), seen("write nested/f.txt"), seen("create empty.txt")]);
      // Made after those were seen, so every poll that could report the directory or the empty file is delivered first.
      await sandbox.files.write("grown/last.txt", "x");
      await seen("create last.txt");
      expect(events).not.toContain("write nested");
      expect(events).not.toContain("write empty.txt");
      expect(events.indexOf("create nested/f.txt")).toBeLessThan(events.indexOf("write nested/f.txt"));
    } finally {
      await handle.stop();
    }
  }, 20_000);

  it("signs download and upload URLs the server takes without the token, and refuses an expired one", async () => {
    await sandbox.files.write("signed.txt", "signed content");
    expect(await (await fetch(await sandbox.downloadUrl("signed.txt", { useSignatureExpiration: 60 }))).text()).toBe(
      "signed content",
    );
    const form = new FormData();
    form.append("file", new Blob(["uploaded by url"]));
    const up = await fetch(await sandbox.uploadUrl("by-url.txt"), { method: "POST", body: form });
    expect(up.status).toBe(200);
    expect(readFileSync(`${h.home}/by-url.txt`, "utf8")).toBe("uploaded by url");
    const expired = await fetch(await sandbox.downloadUrl("signed.txt", { useSignatureExpiration: -10 }));
    expect(await expired.json()).toEqual({ code: 401, message: "signature is already expired" });
  });
});
