/**
 * The helper binary driven directly over its channel, frame by frame: what
 * it answers, when it tags, how it exits. The backends' tests drive it
 * through a session; these pin the binary's own contract (protocol.ts).
 */

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { buildFastCallScript } from "../../src/core/fast-script.js";
import { staticHelperFor } from "../../src/backends/shared/fast-path/helper-path.js";
import { decodeExit, FrameWriter } from "../../src/backends/shared/fast-path/frames.js";
import { HELPER_EXIT, KEY_BYTES, PROTOCOL_VERSION } from "../../src/backends/shared/fast-path/protocol.js";
import { alive, eventually } from "../helpers/processes.js";
import { noLocalHelper, skipAllUnless } from "../helpers/native-helper.js";
import { childrenOf, endHelpers, helper, startHelper } from "../helpers/swmux-harness.js";

afterEach(endHelpers);

describe("swmux over its channel", () => {
  skipAllUnless(noLocalHelper);
  it("prints its protocol version", () => {
    const r = spawnSync(helper!, ["-V"], { encoding: "utf8" });
    expect(r.status).toBe(HELPER_EXIT.ok);
    expect(r.stdout.trim()).toContain(String(PROTOCOL_VERSION));
  });

  it.skipIf(staticHelperFor("aarch64") === undefined || spawnSync("qemu-aarch64-static", ["--version"]).status !== 0)(
    "is built for arm64 too, and that build runs (under qemu here)",
    () => {
      const r = spawnSync("qemu-aarch64-static", [staticHelperFor("aarch64")!.path, "-V"], { encoding: "utf8" });
      expect(r.status).toBe(HELPER_EXIT.ok);
      expect(r.stdout.trim()).toContain(String(PROTOCOL_VERSION));
    },
  );

  it("exits with the usage code and says how to call it", () => {
    const r = spawnSync(helper!, ["only-one-argument"], { encoding: "utf8" });
    expect(r.status).toBe(HELPER_EXIT.usage);
    expect(r.stderr).toMatch(/^usage: swmux/);
  });

  it("tags nothing before the key arrives, however late it comes", async () => {
    const h = startHelper();
    // A launcher started at once would be ready long before this key: a frame tagged then could not be checked.
    await new Promise((resolve) => setTimeout(resolve, 500));
    h.child.stdin.write(h.key);
    await eventually(() => h.frames.length > 0 || h.errors.length > 0, "a first frame");
    expect(h.errors).toEqual([]);
    expect(h.frames[0]!.type).toBe("H");
  });

  it("runs a call: started, its output, then its end", async () => {
    const h = startHelper();
    h.child.stdin.write(h.key);
    await eventually(() => h.frames.some((f) => f.type === "H"), "the ready frame");
    const script = buildFastCallScript({
      command: "echo hello; exit 3",
      cwd: "/tmp",
      knownCwd: "/tmp",
      sessionCwd: true,
    });
    h.child.stdin.write(h.writer.run(7, script, undefined));
    await eventually(
      () => h.frames.some((f) => f.type === "X" && f.id === 7),
      'h.frames.some((f) => f.type === "X" && f.id === 7)',
    );
    const mine = h.frames.filter((f) => f.id === 7);
    expect(mine.map((f) => f.type)).toEqual(["S", "O", "X"]);
    expect(mine[1]!.payload.toString()).toBe("hello\n");
    expect(decodeExit(mine[2]!.payload).status).toBe(3);
    expect(h.errors).toEqual([]);
  });

  it("answers a ping with a pong of the same id", async () => {
    const h = startHelper();
    h.child.stdin.write(h.key);
    h.child.stdin.write(h.writer.frame("P", 41, Buffer.alloc(0)));
    await eventually(() => h.frames.some((f) => f.type === "P"), "the pong");
    expect(h.frames.find((f) => f.type === "P")!.id).toBe(41);
  });

  it("exits with the protocol code on a forged frame, and says why", async () => {
    const h = startHelper();
    h.child.stdin.write(h.key);
    await eventually(() => h.frames.some((f) => f.type === "H"), "the ready frame");
    const forged = new FrameWriter(randomBytes(KEY_BYTES)).frame("P", 1, Buffer.alloc(0));
    // Its number (0) is the one due: only the tag is wrong.
    h.child.stdin.write(forged);
    expect(await h.exited).toBe(HELPER_EXIT.protocol);
    expect(h.stderr()).toMatch(/protocol violation: frame 0 has a wrong tag/);
  });

  it("exits quietly when Node closes the channel, its launcher with it", async () => {
    const h = startHelper();
    h.child.stdin.write(h.key);
    await eventually(() => h.frames.some((f) => f.type === "H"), "the ready frame");
    const [launcher] = childrenOf(h.child.pid!);
    h.child.stdin.end();
    expect(await h.exited).toBe(HELPER_EXIT.ok);
    expect(launcher).toBeGreaterThan(0);
    await eventually(() => !alive(launcher!), "the launcher gone");
  });
});
