import { Code, ConnectError } from "@connectrpc/connect";
import { existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EventType,
  FileType,
  type WatchDirResponse,
} from "../../../../src/gateway/e2b/gen/filesystem/filesystem_pb.js";
import { MAX_WATCHERS_PER_SANDBOX } from "../../../../src/gateway/e2b/filesystem/watchers.js";
import { startHarness, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
}, 30_000);
afterAll(async () => h?.close());

async function codeOf(call: Promise<unknown>): Promise<Code> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return (error as ConnectError).code;
}

describe("Stat", () => {
  it("gives envd's EntryInfo for a file, relative paths starting at the home", async () => {
    writeFileSync(`${h.home}/stat.txt`, "test");
    const { entry } = await h.client.stat({ path: "stat.txt" });
    expect(entry?.name).toBe("stat.txt");
    expect(entry?.path).toBe(`${h.home}/stat.txt`);
    expect(entry?.type).toBe(FileType.FILE);
    expect(entry?.size).toBe(4n);
    expect(entry?.mode).toBe(0o666 & ~process.umask());
    expect(entry?.permissions).toMatch(/^-rw-r--r--$|^-rw-------$|^-rw-rw-r--$/);
    expect(entry?.owner).toBe(userInfo().username);
    expect(entry?.group).not.toBe("");
    expect(Number(entry?.modifiedTime?.seconds)).toBeGreaterThan(1_600_000_000);
  });

  it("reports a symlink as the link, its target absolute; ../ is cleaned against the home", async () => {
    mkdirSync(`${h.home}/links`);
    symlinkSync("../stat-target.txt", `${h.home}/links/up`);
    const { entry } = await h.client.stat({ path: "links/../links/up" });
    expect(entry?.type).toBe(FileType.SYMLINK);
    expect(entry?.path).toBe(`${h.home}/links/up`);
    expect(entry?.symlinkTarget).toBe(`${h.home}/stat-target.txt`);
    expect(entry?.permissions.startsWith("L")).toBe(true);
  });

  it("is not_found for a missing path and invalid_argument for an empty one", async () => {
    expect(await codeOf(h.client.stat({ path: "no-such-file" }))).toBe(Code.NotFound);
    expect(await codeOf(h.client.stat({ path: "" }))).toBe(Code.InvalidArgument);
  });

  it("refuses a user other than the sandbox's", async () => {
    const root = { headers: { authorization: `Basic ${Buffer.from("root:").toString("base64")}` } };
    expect(await codeOf(h.client.stat({ path: "." }, root))).toBe(Code.Unauthenticated);
    const own = { headers: { authorization: `Basic ${Buffer.from("user:").toString("base64")}` } };
    expect((await h.client.stat({ path: "." }, own)).entry?.type).toBe(FileType.DIRECTORY);
  });
});

describe("MakeDir, Move, Remove", () => {
  it("makes parents, answers already_exists the second time and for a file", async () => {
    const made = await h.client.makeDir({ path: "a/b/c" });
    expect(made.entry?.path).toBe(`${h.home}/a/b/c`);
    expect(made.entry?.type).toBe(FileType.DIRECTORY);
    expect(await codeOf(h.client.makeDir({ path: "a/b/c" }))).toBe(Code.AlreadyExists);
    writeFileSync(`${h.home}/plain`, "x");
    expect(await codeOf(h.client.makeDir({ path: "plain" }))).toBe(Code.AlreadyExists);
  });

  it("moves a file (parents made) and answers not_found for a missing source", async () => {
    writeFileSync(`${h.home}/old.txt`, "moved bytes");
    const { entry } = await h.client.move({ source: "old.txt", destination: "new/place.txt" });
    expect(entry?.path).toBe(`${h.home}/new/place.txt`);
    expect(readFileSync(`${h.home}/new/place.txt`, "utf8")).toBe("moved bytes");
    expect(existsSync(`${h.home}/old.txt`)).toBe(false);
    expect(await codeOf(h.client.move({ source: "gone.txt", destination: "x.txt" }))).toBe(Code.NotFound);
  });

  it("moves a symlink as the link, leaving its target where it is", async () => {
    writeFileSync(`${h.home}/target.txt`, "t");
    symlinkSync(`${h.home}/target.txt`, `${h.home}/ln`);
    await h.client.move({ source: "ln", destination: "ln2" });
    expect(readlinkSync(`${h.home}/ln2`)).toBe(`${h.home}/target.txt`);
    expect(readFileSync(`${h.home}/target.txt`, "utf8")).toBe("t");
  });

  it("removes a tree, a missing path without error, and a symlink to outside the home as the link only", async () => {
    mkdirSync(`${h.home}/tree/sub`, { recursive: true });
    writeFileSync(`${h.home}/tree/sub/f`, "x");
    await h.client.remove({ path: "tree" });
    expect(existsSync(`${h.home}/tree`)).toBe(false);
    await h.client.remove({ path: "never-was" });
    const outside = `${h.home}-outside`;
    mkdirSync(outside, { recursive: true });
    writeFileSync(`${outside}/keep`, "keep");
    symlinkSync(outside, `${h.home}/out`);
    await h.client.remove({ path: "out" });
    expect(existsSync(`${h.home}/out`)).toBe(false);
    expect(readFileSync(`${outside}/keep`, "utf8")).toBe("keep");
  });
});

describe("ListDir", () => {
  beforeAll(() => {
    mkdirSync(`${h.home}/l/s1/s11`, { recursive: true });
    mkdirSync(`${h.home}/l/s2`, { recursive: true });
    mkdirSync(`${h.home}/l/s1-x`, { recursive: true });
    writeFileSync(`${h.home}/l/f.txt`, "hello");
  });

  it("lists one level by default and for depth 0 (proto3's unset), in walk order for depth 2", async () => {
    const names = (r: { entries: { path: string }[] }): string[] =>
      r.entries.map((e) => e.path.slice(h.home.length + 3));
    expect(names(await h.client.listDir({ path: "l" }))).toEqual(["f.txt", "s1", "s1-x", "s2"]);
    expect(names(await h.client.listDir({ path: "l", depth: 0 }))).toEqual(["f.txt", "s1", "s1-x", "s2"]);
    expect(names(await h.client.listDir({ path: "l", depth: 2 }))).toEqual(["f.txt", "s1", "s1/s11", "s1-x", "s2"]);
  });

  it("is not_found for a missing directory and invalid_argument for a file", async () => {
    expect(await codeOf(h.client.listDir({ path: "nope" }))).toBe(Code.NotFound);
    expect(await codeOf(h.client.listDir({ path: "l/f.txt" }))).toBe(Code.InvalidArgument);
  });
});

describe("WatchDir", () => {
  async function next(events: AsyncIterator<WatchDirResponse>, want: (r: WatchDirResponse) => boolean) {
    for (;;) {
      const { value, done } = await events.next();
      if (done === true) throw new Error("the stream ended");
      if (want(value)) return value;
    }
  }

  it("starts, then names a write below the directory; includeEntry carries its info", async () => {
    mkdirSync(`${h.home}/w/nested`, { recursive: true });
    writeFileSync(`${h.home}/w/nested/f.txt`, "one");
    const abort = new AbortController();
    const stream = h.client.watchDir({ path: "w", recursive: true, includeEntry: true }, { signal: abort.signal });
    const events = stream[Symbol.asyncIterator]();
    expect((await events.next()).value?.event.case).toBe("start");
    writeFileSync(`${h.home}/w/nested/f.txt`, "two, longer");
    const event = await next(events, (r) => r.event.case === "filesystem");
    expect(event.event.case === "filesystem" && event.event.value.name).toBe("nested/f.txt");
    expect(event.event.case === "filesystem" && event.event.value.type).toBe(EventType.WRITE);
    expect(event.event.case === "filesystem" && event.event.value.entry?.path).toBe(`${h.home}/w/nested/f.txt`);
    abort.abort();
  }, 20_000);

  it("is not_found for a missing directory, invalid_argument for a file", async () => {
    writeFileSync(`${h.home}/wf`, "x");
    const first = (path: string) => h.client.watchDir({ path })[Symbol.asyncIterator]().next();
    expect(await codeOf(first("no-dir"))).toBe(Code.NotFound);
    expect(await codeOf(first("wf"))).toBe(Code.InvalidArgument);
  });

  it("ends with not_found when the watched directory is removed", async () => {
    mkdirSync(`${h.home}/doomed`);
    const events = h.client.watchDir({ path: "doomed" })[Symbol.asyncIterator]();
    expect((await events.next()).value?.event.case).toBe("start");
    await h.client.remove({ path: "doomed" });
    const error = await (async () => {
      for (;;)
        await events.next().then((r) => {
          if (r.done === true) throw new Error("ended without an error");
        });
    })().catch((e: unknown) => e);
    expect((error as ConnectError).code).toBe(Code.NotFound);
  }, 20_000);
});

describe("CreateWatcher / GetWatcherEvents / RemoveWatcher", () => {
  it("holds events until polled, then forgets the watcher once removed", async () => {
    mkdirSync(`${h.home}/polled`);
    const { watcherId } = await h.client.createWatcher({ path: "polled" });
    writeFileSync(`${h.home}/polled/new.txt`, "x");
    // inotify's order for a file made with content: CREATE, then WRITE (they may come in two polls).
    const events: { name: string; type: EventType }[] = [];
    while (events.length < 2) {
      events.push(...(await h.client.getWatcherEvents({ watcherId })).events);
      if (events.length < 2) await new Promise((r) => setTimeout(r, 100));
    }
    expect(events).toMatchObject([
      { name: "new.txt", type: EventType.CREATE },
      { name: "new.txt", type: EventType.WRITE },
    ]);
    await h.client.removeWatcher({ watcherId });
    expect(await codeOf(h.client.getWatcherEvents({ watcherId }))).toBe(Code.NotFound);
    expect(await codeOf(h.client.removeWatcher({ watcherId: "not-an-id" }))).toBe(Code.NotFound);
  }, 20_000);

  it("answers not_found once the watched directory is removed and its events are drained", async () => {
    mkdirSync(`${h.home}/vanishing`);
    const { watcherId } = await h.client.createWatcher({ path: "vanishing" });
    await h.client.remove({ path: "vanishing" });
    let code: Code | undefined;
    while (code === undefined) {
      code = await h.client.getWatcherEvents({ watcherId }).then(
        () => undefined,
        (e: unknown) => (e as ConnectError).code,
      );
      if (code === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    expect(code).toBe(Code.NotFound);
    // Gone for good: removing it again is not_found too.
    expect(await codeOf(h.client.removeWatcher({ watcherId }))).toBe(Code.NotFound);
  }, 20_000);

  it(`refuses more than ${MAX_WATCHERS_PER_SANDBOX} watchers at once`, async () => {
    mkdirSync(`${h.home}/many`);
    const ids: string[] = [];
    for (let i = 0; i < MAX_WATCHERS_PER_SANDBOX; i++)
      ids.push((await h.client.createWatcher({ path: "many" })).watcherId);
    expect(await codeOf(h.client.createWatcher({ path: "many" }))).toBe(Code.ResourceExhausted);
    for (const watcherId of ids) await h.client.removeWatcher({ watcherId });
    const again = await h.client.createWatcher({ path: "many" });
    await h.client.removeWatcher({ watcherId: again.watcherId });
  }, 60_000);
});
