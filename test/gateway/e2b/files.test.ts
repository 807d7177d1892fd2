import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxBySignature, signedQuery } from "../../../src/gateway/e2b/files.js";
import { startHarness, type Harness } from "./filesystem/harness.js";

const LIMIT = 64 * 1024;
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ maxUploadBytes: LIMIT });
}, 30_000);
afterAll(async () => h?.close());

const auth = (): Record<string, string> => ({ "x-access-token": h.sandbox.accessToken });

/** A signed URL made as E2B's SDK makes one (WebCrypto, base64 without padding). */
async function signedUrl(
  path: string,
  operation: "read" | "write",
  options: { user?: string; expiresInSeconds?: number; token?: string } = {},
): Promise<string> {
  const expiry =
    options.expiresInSeconds === undefined ? undefined : Math.floor(Date.now() / 1000) + options.expiresInSeconds;
  const raw = [
    path,
    operation,
    options.user ?? "",
    options.token ?? h.sandbox.accessToken,
    ...(expiry === undefined ? [] : [String(expiry)]),
  ].join(":");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(raw)));
  const signature = `v1_${btoa(String.fromCharCode(...digest)).replace(/=+$/, "")}`;
  const url = new URL("/files", h.url);
  if (options.user !== undefined) url.searchParams.set("username", options.user);
  url.searchParams.set("path", path);
  url.searchParams.set("signature", signature);
  if (expiry !== undefined) url.searchParams.set("signature_expiration", String(expiry));
  return url.toString();
}

const filesUrl = (query: Record<string, string>): string => `${h.url}/files?${new URLSearchParams(query)}`;
const leftovers = (dir: string): string[] => readdirSync(dir).filter((name) => name.startsWith(".shellwright-tmp"));

describe("download", () => {
  it("gives the whole file, relative to the home, gzip when accepted", async () => {
    const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) % 256));
    writeFileSync(`${h.home}/blob.bin`, bytes);
    const plain = await fetch(filesUrl({ path: "blob.bin" }), { headers: auth() });
    expect(plain.status).toBe(200);
    expect(Buffer.from(await plain.arrayBuffer()).equals(bytes)).toBe(true);
    const zipped = await fetch(filesUrl({ path: `${h.home}/blob.bin` }), {
      headers: { ...auth(), "accept-encoding": "gzip" },
    });
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(Buffer.from(await zipped.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("answers envd's errors: 404 missing, 400 a directory, 401 another user", async () => {
    const missing = await fetch(filesUrl({ path: "nope.txt" }), { headers: auth() });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ code: 404, message: `No such file or directory: '${h.home}/nope.txt'` });
    expect((await fetch(filesUrl({ path: "." }), { headers: auth() })).status).toBe(400);
    const root = await fetch(filesUrl({ path: "blob.bin", username: "root" }), { headers: auth() });
    expect(root.status).toBe(401);
    expect(((await root.json()) as { message: string }).message).toMatch(/runs as 'user' only/);
  });
});

describe("upload", () => {
  it("takes one multipart file at the URL's path, parents made", async () => {
    const form = new FormData();
    form.append("file", new Blob(["file content"]));
    const res = await fetch(filesUrl({ path: "up/one.txt" }), { method: "POST", body: form, headers: auth() });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ name: "one.txt", path: `${h.home}/up/one.txt`, type: "file" }]);
    expect(readFileSync(`${h.home}/up/one.txt`, "utf8")).toBe("file content");
  });

  it("takes several multipart files, each at its part's filename (absolute or relative)", async () => {
    const form = new FormData();
    form.append("file", new Blob(["A"]), `${h.home}/multi/a.txt`);
    form.append("file", new Blob(["B"]), "multi/b.txt");
    const res = await fetch(`${h.url}/files`, { method: "POST", body: form, headers: auth() });
    expect(await res.json()).toEqual([
      { name: "a.txt", path: `${h.home}/multi/a.txt`, type: "file" },
      { name: "b.txt", path: `${h.home}/multi/b.txt`, type: "file" },
    ]);
    expect(readFileSync(`${h.home}/multi/b.txt`, "utf8")).toBe("B");
  });

  it("takes a plain `file` field (no filename) at the URL's path, as envd does; other fields are skipped", async () => {
    const form = new FormData();
    form.append("note", "not a file");
    form.append("file", "plain field content");
    const res = await fetch(await signedUrl("plain/field.txt", "write"), { method: "POST", body: form });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ name: "field.txt", path: `${h.home}/plain/field.txt`, type: "file" }]);
    expect(readFileSync(`${h.home}/plain/field.txt`, "utf8")).toBe("plain field content");
  });

  it("refuses a plain `file` field without a path in the URL, and two at one path; nothing is written", async () => {
    const lone = new FormData();
    lone.append("file", "where to?");
    const noPath = await fetch(`${h.url}/files`, { method: "POST", body: lone, headers: auth() });
    expect(noPath.status).toBe(400);
    expect(await noPath.json()).toMatchObject({ message: expect.stringMatching(/part 'file' has no filename/) });
    const two = new FormData();
    two.append("file", "first");
    two.append("file", "second");
    const twice = await fetch(filesUrl({ path: "plain/twice.txt" }), { method: "POST", body: two, headers: auth() });
    expect(twice.status).toBe(400);
    expect(await twice.json()).toMatchObject({ message: expect.stringMatching(/body holds 2/) });
    expect(existsSync(`${h.home}/plain/twice.txt`)).toBe(false);
  });

  it("takes raw bytes, gzip-encoded too, streamed without a length", async () => {
    const text = "raw and zipped ".repeat(1000);
    const body = new Blob([gzipSync(text)]).stream();
    const res = await fetch(filesUrl({ path: "raw.txt" }), {
      method: "POST",
      body,
      duplex: "half",
      headers: { ...auth(), "content-type": "application/octet-stream", "content-encoding": "gzip" },
    } as RequestInit);
    expect(res.status).toBe(200);
    expect(readFileSync(`${h.home}/raw.txt`, "utf8")).toBe(text);
  });

  it("refuses bodies it cannot take, naming why: no path, unknown encoding, metadata, two files at one path", async () => {
    const post = (query: Record<string, string>, body: string | FormData, headers: Record<string, string>) =>
      fetch(filesUrl(query), { method: "POST", body, headers: { ...auth(), ...headers } });
    const raw = { "content-type": "application/octet-stream" };
    expect(await (await post({}, "x", raw)).json()).toMatchObject({
      code: 400,
      message: expect.stringMatching(/path is required/),
    });
    expect(await (await post({ path: "e.txt" }, "x", { ...raw, "content-encoding": "br" })).json()).toMatchObject({
      code: 400,
      message: expect.stringMatching(/Content-Encoding "br"/),
    });
    expect((await post({ path: "m.txt" }, "x", { ...raw, "x-metadata-author": "me" })).status).toBe(400);
    const form = new FormData();
    form.append("file", new Blob(["1"]), "1.txt");
    form.append("file", new Blob(["2"]), "2.txt");
    expect(await (await post({ path: "both.txt" }, form, {})).json()).toMatchObject({
      message: expect.stringMatching(/path names one file but the body holds 2/),
    });
    expect(existsSync(`${h.home}/e.txt`) || existsSync(`${h.home}/m.txt`) || existsSync(`${h.home}/both.txt`)).toBe(
      false,
    );
  });

  it("refuses a body that is not what it says: broken gzip, broken multipart; nothing is written", async () => {
    const broken = await fetch(filesUrl({ path: "broken.txt" }), {
      method: "POST",
      body: "this is not gzip",
      headers: { ...auth(), "content-type": "application/octet-stream", "content-encoding": "gzip" },
    });
    expect(await broken.json()).toMatchObject({
      code: 400,
      message: expect.stringMatching(/gzip body could not be decompressed/),
    });
    const garbage = await fetch(filesUrl({ path: "garbage.txt" }), {
      method: "POST",
      body: "--x\r\nno headers, no end",
      headers: { ...auth(), "content-type": "multipart/form-data; boundary=x" },
    });
    expect(await garbage.json()).toMatchObject({
      code: 400,
      message: expect.stringMatching(/multipart body could not be read/),
    });
    expect(existsSync(`${h.home}/broken.txt`) || existsSync(`${h.home}/garbage.txt`)).toBe(false);
    expect(leftovers(h.home)).toEqual([]);
  });

  it("refuses an upload over the limit with 413 and leaves the old file whole: raw, gzip bomb, multipart", async () => {
    mkdirSync(`${h.home}/big`, { recursive: true });
    writeFileSync(`${h.home}/big/kept.txt`, "old content");
    const chunk = new Uint8Array(16 * 1024).fill(97);
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(chunk); // forever: only the server's limit ends it
      },
    });
    const raw = await fetch(filesUrl({ path: "big/kept.txt" }), {
      method: "POST",
      body: endless,
      duplex: "half",
      headers: { ...auth(), "content-type": "application/octet-stream" },
    } as RequestInit).catch((error: unknown) => error);
    // The server answers 413 and stops reading; fetch may see the answer or the cut connection.
    if (raw instanceof Response) expect(raw.status).toBe(413);
    const bomb = gzipSync(Buffer.alloc(LIMIT * 4));
    expect(bomb.length).toBeLessThan(LIMIT);
    const zipped = await fetch(filesUrl({ path: "big/kept.txt" }), {
      method: "POST",
      body: bomb,
      headers: { ...auth(), "content-type": "application/octet-stream", "content-encoding": "gzip" },
    });
    expect(zipped.status).toBe(413);
    const form = new FormData();
    form.append("file", new Blob([Buffer.alloc(LIMIT + 1)]));
    const multipart = await fetch(filesUrl({ path: "big/kept.txt" }), { method: "POST", body: form, headers: auth() });
    expect(await multipart.json()).toMatchObject({ code: 413, message: expect.stringMatching(/limit of 65536 bytes/) });
    expect(readFileSync(`${h.home}/big/kept.txt`, "utf8")).toBe("old content");
    expect(leftovers(`${h.home}/big`)).toEqual([]);
  });
});

describe("signed URLs", () => {
  beforeAll(() => writeFileSync(`${h.home}/hello.txt`, "hello world"));

  it("serves a valid signature without the token, with or without an expiry", async () => {
    const forever = await fetch(await signedUrl("hello.txt", "read"));
    expect(await forever.text()).toBe("hello world");
    const soon = await fetch(await signedUrl("hello.txt", "read", { expiresInSeconds: 100 }));
    expect(await soon.text()).toBe("hello world");
    const form = new FormData();
    form.append("file", new Blob(["signed upload"]));
    const up = await fetch(await signedUrl("signed.txt", "write", { user: "user" }), { method: "POST", body: form });
    expect(await up.json()).toEqual([{ name: "signed.txt", path: `${h.home}/signed.txt`, type: "file" }]);
  });

  it("refuses an expired, forged, reused or missing signature with 401 and envd's message", async () => {
    const expired = await fetch(await signedUrl("hello.txt", "read", { expiresInSeconds: -10 }));
    expect(expired.status).toBe(401);
    expect(await expired.json()).toEqual({ code: 401, message: "signature is already expired" });
    const other = new URL(await signedUrl("hello.txt", "read"));
    other.searchParams.set("path", "signed.txt");
    expect(await (await fetch(other)).json()).toEqual({ code: 401, message: "invalid signature" });
    const readAsWrite = await fetch(await signedUrl("x.txt", "read"), { method: "POST", body: new FormData() });
    expect(readAsWrite.status).toBe(401);
    const stretched = new URL(await signedUrl("hello.txt", "read", { expiresInSeconds: -10 }));
    stretched.searchParams.set("signature_expiration", String(Math.floor(Date.now() / 1000) + 1000));
    expect(await (await fetch(stretched)).json()).toEqual({ code: 401, message: "invalid signature" });
    const wrongToken = await fetch(await signedUrl("hello.txt", "read", { token: "not-the-token-000000" }));
    expect(wrongToken.status).toBe(401);
    const bare = await fetch(filesUrl({ path: "hello.txt" }));
    expect(await bare.json()).toMatchObject({
      code: 401,
      message: expect.stringMatching(/X-Access-Token or a signed URL/),
    });
    expect(existsSync(`${h.home}/x.txt`)).toBe(false);
  });

  it("finds the sandbox a signed URL belongs to among several, and none for a bad one", async () => {
    const others = [
      { sandboxId: "a", accessToken: "token-of-a-0123456789" },
      { sandboxId: "mine", accessToken: h.sandbox.accessToken },
      { sandboxId: "b", accessToken: "token-of-b-0123456789" },
    ];
    const url = new URL(await signedUrl("hello.txt", "read", { expiresInSeconds: 60 }));
    expect(sandboxBySignature(others, signedQuery(url), "read")?.sandboxId).toBe("mine");
    expect(sandboxBySignature(others, signedQuery(url), "write")).toBeUndefined();
    url.searchParams.set("path", "other.txt");
    expect(sandboxBySignature(others, signedQuery(url), "read")).toBeUndefined();
  });
});
