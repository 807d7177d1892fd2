import { chmod, mkdir, mkdtemp, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InvalidOptionError, SyncError } from "../../src/core/errors.js";
import { FileSync, normalizeSyncConfig, type FileSyncOptions } from "../../src/sync/index.js";
import { LocalDirectoryTransfer, listFiles, modeOf } from "./local-transfer.js";

let work: string;
let local: string;
let transfer: LocalDirectoryTransfer;
let clock: number;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "sw-sync-"));
  local = join(work, "local");
  await mkdir(join(local, "skills/deep/er"), { recursive: true });
  await writeFile(join(local, "token.json"), '{"token":"s3cret"}', { mode: 0o644 });
  await writeFile(join(local, "skills/a.md"), "alpha");
  await writeFile(join(local, "skills/run.sh"), "#!/bin/sh\necho run\n", { mode: 0o755 });
  await writeFile(join(local, "skills/deep/er/b.md"), "beta");
  transfer = new LocalDirectoryTransfer(join(work, "remote"));
  await mkdir(transfer.home);
  clock = 1_000_000;
});
afterEach(async () => {
  await rm(work, { recursive: true, force: true });
});

function makeSync(options: Partial<FileSyncOptions> = {}): FileSync {
  return new FileSync(transfer, {
    files: [{ local: join(local, "token.json"), remote: ".creds/token.json" }],
    directories: [{ local: join(local, "skills"), remote: ".agent/skills" }],
    now: () => clock,
    ...options,
  });
}

const remote = (path: string): string => join(transfer.home, path);

/** A sync that has run once, `ms` ago on the test's clock, with the calls of that run forgotten. */
async function syncedAgoMs(ms: number): Promise<ReturnType<typeof makeSync>> {
  const sync = makeSync();
  await sync.sync();
  transfer.calls.length = 0;
  clock += ms;
  return sync;
}

describe("FileSync", () => {
  it("first sync transfers everything; credentials land 0600, directory files keep their modes", async () => {
    const report = await makeSync().sync();
    expect(report.skipped).toBeUndefined();
    expect(report.uploaded).toEqual([".creds/token.json"]);
    expect(report.mirrored).toEqual([".agent/skills"]);
    expect(await readFile(remote(".creds/token.json"), "utf8")).toBe('{"token":"s3cret"}');
    expect(await modeOf(remote(".creds/token.json"))).toBe(0o600);
    expect(await listFiles(remote(".agent/skills"))).toEqual(["a.md", "deep/er/b.md", "run.sh"]);
    expect(await modeOf(remote(".agent/skills/run.sh"))).toBe(0o755);
    const mirror = transfer.calls.find((call) => call.op === "mirrorDirectory");
    expect(mirror).toMatchObject({ full: true, changed: ["a.md", "deep/er/b.md", "run.sh"], removed: [] });
  });

  it("inside the interval does not even look at the files", async () => {
    const sync = await syncedAgoMs(4999);
    await writeFile(join(local, "skills/a.md"), "changed but unseen");
    await rm(join(local, "token.json"));
    expect((await sync.sync()).skipped).toBe("interval");
    expect(transfer.calls).toEqual([]);
  });

  it("after the interval, an unchanged set makes no transfer call at all", async () => {
    const sync = await syncedAgoMs(5000);
    const report = await sync.sync();
    expect(report).toEqual({ skipped: undefined, uploaded: [], removed: [], mirrored: [], createdDirectories: [] });
    expect(transfer.calls).toEqual([]);
  });

  it("a changed file is the only one transferred, even when only its mtime moved", async () => {
    const sync = await syncedAgoMs(6000);
    const later = new Date(Date.now() + 60_000);
    await utimes(join(local, "skills/deep/er/b.md"), later, later);
    await sync.sync();
    expect(transfer.calls).toEqual([
      { op: "mirrorDirectory", remote: ".agent/skills", changed: ["deep/er/b.md"], removed: [], full: false },
    ]);

    transfer.calls.length = 0;
    clock += 6000;
    await writeFile(join(local, "token.json"), '{"token":"rotated"}');
    await sync.sync();
    expect(transfer.calls).toEqual([{ op: "uploadFiles", remotes: [".creds/token.json"] }]);
    expect(await readFile(remote(".creds/token.json"), "utf8")).toBe('{"token":"rotated"}');
  });

  it("a mode change is a change", async () => {
    const sync = await syncedAgoMs(6000);
    await chmod(join(local, "skills/a.md"), 0o700);
    await sync.sync();
    expect(transfer.calls).toEqual([
      { op: "mirrorDirectory", remote: ".agent/skills", changed: ["a.md"], removed: [], full: false },
    ]);
    expect(await modeOf(remote(".agent/skills/a.md"))).toBe(0o700);
  });

  it("a file deleted locally is deleted remotely, in a directory and as a single file", async () => {
    const sync = await syncedAgoMs(6000);
    await rm(join(local, "skills/deep/er/b.md"));
    await rm(join(local, "token.json"));
    const report = await sync.sync();
    expect(report.removed).toEqual([".creds/token.json"]);
    expect(transfer.calls).toContainEqual({
      op: "mirrorDirectory",
      remote: ".agent/skills",
      changed: [],
      removed: ["deep/er/b.md"],
      full: false,
    });
    expect(await listFiles(remote(".agent/skills"))).toEqual(["a.md", "run.sh"]);
    expect(await listFiles(remote(".creds"))).toEqual([]);

    // Removed once, remembered as absent: no further calls.
    transfer.calls.length = 0;
    clock += 6000;
    await sync.sync();
    expect(transfer.calls).toEqual([]);
  });

  it("creates each remote directory once and remembers it", async () => {
    const sync = makeSync();
    await sync.sync();
    const made = transfer.calls.filter((call) => call.op === "makeDirectories");
    expect(made).toEqual([
      { op: "makeDirectories", paths: [".agent", ".agent/skills", ".agent/skills/deep/er", ".creds"] },
    ]);
    transfer.calls.length = 0;
    clock += 6000;
    await writeFile(join(local, "skills/deep/er/b.md"), "beta two");
    await writeFile(join(local, "token.json"), "x");
    await sync.sync();
    expect(transfer.calls.filter((call) => call.op === "makeDirectories")).toEqual([]);
    transfer.calls.length = 0;
    clock += 6000;
    await mkdir(join(local, "skills/new"));
    await writeFile(join(local, "skills/new/c.md"), "gamma");
    await sync.sync();
    expect(transfer.calls[0]).toEqual({ op: "makeDirectories", paths: [".agent/skills/new"] });
  });

  it("a failed transfer drops the cache: the next call, even inside the interval, transfers everything", async () => {
    const sync = makeSync();
    await sync.sync();
    clock += 6000;
    await writeFile(join(local, "skills/a.md"), "alpha two");
    transfer.failNext = "mirrorDirectory";
    const failure = await sync.sync().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SyncError);
    expect((failure as SyncError).message).toContain("mirrorDirectory failed on purpose");
    expect((failure as SyncError).code).toBe("SYNC_FAILED");

    // Simulate the remote side having been wiped.
    await rm(transfer.home, { recursive: true });
    await mkdir(transfer.home);
    transfer.calls.length = 0;
    clock += 1;
    const report = await sync.sync();
    expect(report.skipped).toBeUndefined();
    expect(report.uploaded).toEqual([".creds/token.json"]);
    expect(transfer.calls).toContainEqual({
      op: "mirrorDirectory",
      remote: ".agent/skills",
      changed: ["a.md", "deep/er/b.md", "run.sh"],
      removed: [],
      full: true,
    });
    expect(transfer.calls[0]).toMatchObject({ op: "makeDirectories" });
    expect(await readFile(remote(".agent/skills/a.md"), "utf8")).toBe("alpha two");
  });

  it("force transfers everything, per call or always", async () => {
    const sync = makeSync();
    await sync.sync();
    transfer.calls.length = 0;
    const report = await sync.sync({ force: true });
    expect(report.uploaded).toEqual([".creds/token.json"]);
    expect(report.mirrored).toEqual([".agent/skills"]);

    const always = makeSync({ force: true });
    await always.sync();
    transfer.calls.length = 0;
    await always.sync();
    expect(transfer.calls.map((call) => call.op)).toEqual(["makeDirectories", "uploadFiles", "mirrorDirectory"]);
  });

  it("a full mirror deletes remote files that were never in the local tree", async () => {
    await mkdir(remote(".agent/skills"), { recursive: true });
    await writeFile(remote(".agent/skills/stale.md"), "old");
    await makeSync().sync();
    expect(await listFiles(remote(".agent/skills"))).toEqual(["a.md", "deep/er/b.md", "run.sh"]);
  });

  it("skips symbolic links and leaves a missing local directory's remote alone", async () => {
    await symlink("/etc/passwd", join(local, "skills/link"));
    const sync = makeSync({
      directories: [
        { local: join(local, "skills"), remote: "s" },
        { local: join(work, "missing"), remote: "m" },
      ],
    });
    await mkdir(remote("m"));
    await writeFile(remote("m/keep"), "keep");
    const report = await sync.sync();
    expect(report.mirrored).toEqual(["s"]);
    expect(await listFiles(remote("s"))).toEqual(["a.md", "deep/er/b.md", "run.sh"]);
    expect(await listFiles(remote("m"))).toEqual(["keep"]);
  });

  it("serialises concurrent calls", async () => {
    const sync = makeSync();
    const [first, second] = await Promise.all([sync.sync(), sync.sync()]);
    expect(first.skipped).toBeUndefined();
    expect(second.skipped).toBe("interval");
    expect(transfer.calls.filter((call) => call.op === "mirrorDirectory")).toHaveLength(1);
  });

  it("invalidate() forgets what the remote side holds", async () => {
    const sync = makeSync();
    await sync.sync();
    sync.invalidate();
    transfer.calls.length = 0;
    await sync.sync();
    expect(transfer.calls.map((call) => call.op)).toEqual(["makeDirectories", "uploadFiles", "mirrorDirectory"]);
  });
});

describe("normalizeSyncConfig", () => {
  it("normalises paths and applies defaults", () => {
    expect(
      normalizeSyncConfig(
        "sync",
        {
          files: [{ local: "creds/t.json", remote: "~/.creds/./t.json" }],
          directories: [{ local: "/abs/skills", remote: "/opt//skills/" }],
        },
        "/base",
      ),
    ).toEqual({
      files: [{ local: "/base/creds/t.json", remote: ".creds/t.json" }],
      directories: [{ local: "/abs/skills", remote: "/opt/skills" }],
      intervalMs: 5000,
      force: false,
    });
    expect(normalizeSyncConfig("sync", undefined)).toBeUndefined();
    expect(normalizeSyncConfig("sync", { files: [] })).toBeUndefined();
  });

  it.each([
    [{ files: "x" }, "sync.files", "must be an array"],
    [{ files: [{ local: "a" }] }, "sync.files[0].remote", "must be a string"],
    [{ files: [{ local: "a", remote: "b", mode: 0o10000 }] }, "sync.files[0].mode", "0o7777"],
    [{ files: [{ local: "a", remote: "~bob/x" }] }, "sync.files[0].remote", "~user"],
    [{ files: [{ local: "a", remote: "x/../y" }] }, "sync.files[0].remote", '".."'],
    [{ files: [{ local: "a", remote: "x", extra: 1 }] }, "extra", "Unknown"],
    [{ directories: [{ local: "a", remote: "~" }] }, "sync.directories[0].remote", "below the remote home"],
    [{ directories: [{ local: "a", remote: "/" }] }, "sync.directories[0].remote", "below the remote home"],
    [{ intervalMs: -1 }, "sync.intervalMs", "-1"],
    [{ force: "yes" }, "sync.force", '"yes"'],
    [{ files: [{ local: "a", remote: "x" }], directories: [{ local: "b", remote: "~/x" }] }, "sync", "twice"],
  ])("rejects %j naming %s", (value, option, text) => {
    let error: unknown;
    try {
      normalizeSyncConfig("sync", value);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe(option);
    expect((error as InvalidOptionError).message).toContain(text);
  });
});
