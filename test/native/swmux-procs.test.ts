/**
 * The helper's process service over its channel (protocol.ts: `T`, `I`, `U`;
 * `o`, `i`, `x`): a background process started by one of its calls, as the
 * process tool starts it (launchScript), attached, written to and streamed,
 * and the adversaries: input after the end, a detach racing the end, a flood
 * with a reader that does not read, two attaches, a pid that is not its own.
 */

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildFastCallScript } from "../../src/core/fast-script.js";
import { decodeExit } from "../../src/backends/shared/fast-path/frames.js";
import { ATTACH_FLAG, INPUT_STATUS, PROC_END } from "../../src/backends/shared/fast-path/protocol.js";
import { launchScript, processFiles } from "../../src/tools/process/process-scripts.js";
import { alive, eventually } from "../helpers/processes.js";
import { noLocalHelper, skipAllUnless } from "../helpers/native-helper.js";
import { endHelpers, startReady, type Harness } from "../helpers/swmux-harness.js";

const groups: number[] = [];
afterEach(() => {
  for (const pgid of groups.splice(0))
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // already gone
    }
  endHelpers();
});

let nextId = 100;

/** Starts `command` in the background through a call of the helper, as the process tool does; its pid and dir. */
async function launch(
  h: Harness,
  command: string,
  maxLogBytes = 1 << 20,
  separateStreams = false,
): Promise<{ pid: number; dir: string }> {
  const id = nextId++;
  const dir = join(h.dir, `proc-${id}`);
  const script = launchScript(processFiles(dir), command, `proc_${id}`, { maxLogBytes, separateStreams });
  h.child.stdin.write(
    h.writer.run(id, buildFastCallScript({ command: script, cwd: "/tmp", knownCwd: "/tmp" }), undefined),
  );
  await eventually(() => h.frames.some((f) => f.type === "X" && f.id === id), "the launch's end");
  const output = Buffer.concat(h.frames.filter((f) => f.type === "O" && f.id === id).map((f) => f.payload)).toString();
  const pid = Number(/(\d+)\s*$/.exec(output)?.[1]);
  expect(decodeExit(h.frames.find((f) => f.type === "X" && f.id === id)!.payload).status).toBe(0);
  groups.push(pid);
  return { pid, dir };
}

function attach(h: Harness, id: number, pid: number, dir: string, flags = 0): void {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(pid, 0);
  head[4] = flags;
  h.child.stdin.write(h.writer.frame("T", id, Buffer.concat([head, Buffer.from(dir)])));
}

const streamed = (h: Harness, id: number, type = "o"): Buffer =>
  Buffer.concat(h.frames.filter((f) => f.type === type && f.id === id).map((f) => f.payload));
const endOf = (h: Harness, id: number): number | undefined =>
  h.frames.find((f) => f.type === "x" && f.id === id)?.payload[0];
const acks = (h: Harness, id: number): number[] =>
  h.frames.filter((f) => f.type === "i" && f.id === id).map((f) => f.payload[0]!);

/**
 * Sends `bytes` to the attached process's stdin until the helper acks them written: until its wrapper has started
 * the holder of its stdin, the ack says "not ready".
 */
async function writeOnceOpen(h: Harness, id: number, bytes: Buffer): Promise<void> {
  await eventually(async () => {
    h.child.stdin.write(h.writer.frame("I", id, bytes));
    const before = acks(h, id).length;
    await eventually(() => acks(h, id).length > before, "the ack");
    return acks(h, id).at(-1) === INPUT_STATUS.written;
  }, "a written input");
}

/** The helper still answers (a ping), and broke no rule of the protocol. */
async function stillServes(h: Harness, pingId = 9999): Promise<void> {
  h.child.stdin.write(h.writer.frame("P", pingId));
  await eventually(() => h.frames.some((f) => f.type === "P" && f.id === pingId), "the pong");
  expect(h.errors).toEqual([]);
}

describe("swmux's attached processes", () => {
  skipAllUnless(noLocalHelper);

  it("writes an input to the process's stdin and streams its output back, then detaches", async () => {
    const h = await startReady();
    const { pid, dir } = await launch(h, "cat");
    attach(h, 1, pid, dir);
    await writeOnceOpen(h, 1, Buffer.from("hello\n"));
    await eventually(() => streamed(h, 1).toString() === "hello\n", "the echo");
    h.child.stdin.write(h.writer.frame("U", 1));
    await eventually(() => endOf(h, 1) !== undefined, "the detach's end");
    expect(endOf(h, 1)).toBe(PROC_END.detached);
    // Detached is not ended: the process runs on.
    expect(alive(pid)).toBe(true);
    await stillServes(h);
  });

  it("streams a log across its bounded head and segment exactly, then the end once the process is gone", async () => {
    const h = await startReady();
    // 1 MiB bound: a 256 KiB head, then segments of 384 KiB; the output is 400 KB.
    const { pid, dir } = await launch(h, "read -r _; seq 1 68894", 1 << 20);
    attach(h, 2, pid, dir);
    await writeOnceOpen(h, 2, Buffer.from("go\n"));
    await eventually(() => endOf(h, 2) !== undefined, "the end");
    expect(endOf(h, 2)).toBe(PROC_END.ended);
    const expected = Array.from({ length: 68894 }, (_, i) => `${i + 1}\n`).join("");
    expect(expected.length).toBeGreaterThan(256 * 1024);
    expect(streamed(h, 2).toString()).toBe(expected);
    expect(alive(pid)).toBe(false);
    // Nothing of the channel after its end.
    const last = h.frames.findLastIndex((f) => f.id === 2);
    expect(h.frames[last]!.type).toBe("x");
    await stillServes(h);
  });

  it("answers no input for a channel after its end, and a detach racing the end ends the channel once", async () => {
    const h = await startReady();
    const { pid, dir } = await launch(h, "exit 0");
    await eventually(() => !alive(pid), "the process gone");
    attach(h, 3, pid, dir);
    // The detach and the input arrive while (or after) the helper saw the end: one end frame, and nothing after it
    // (Node settles its write closed at the `x`; an `i` after it would be a frame for a channel Node no longer has).
    h.child.stdin.write(h.writer.frame("U", 3));
    h.child.stdin.write(h.writer.frame("I", 3, Buffer.from("late\n")));
    await stillServes(h);
    expect(h.frames.filter((f) => f.type === "x" && f.id === 3)).toHaveLength(1);
    // An input for a channel long gone: no answer, and not a violation.
    h.child.stdin.write(h.writer.frame("I", 3, Buffer.from("later\n")));
    await stillServes(h, 9998);
    const last = h.frames.findLastIndex((f) => f.id === 3);
    expect(h.frames[last]!.type).toBe("x");
    expect(acks(h, 3)).toEqual([]);
  });

  it("keeps its memory bounded while a process floods and Node does not read", async () => {
    const h = await startReady();
    const rss = (): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${h.child.pid}/status`, "utf8"))![1]);
    const before = rss();
    // 64 MiB through a 4 MiB bounded log; the reader stops reading while most of it is written.
    const { pid, dir } = await launch(h, "head -c 67108864 /dev/zero", 4 << 20);
    h.child.stdout.pause();
    attach(h, 4, pid, dir);
    await eventually(() => !alive(pid), "the flood's end", 120_000);
    const during = rss();
    h.child.stdout.resume();
    await eventually(() => endOf(h, 4) !== undefined, "the end");
    expect(endOf(h, 4)).toBe(PROC_END.ended);
    // What it held while blocked on Node: about one output frame (256 KiB), never the flood.
    expect(during - before).toBeLessThan(4096);
    // The middle is gone as it is for poll (log-bound.ts); what came is the head and the tail kept.
    const got = streamed(h, 4).length;
    expect(got).toBeGreaterThanOrEqual(1 << 20);
    expect(got).toBeLessThanOrEqual(64 << 20);
    await stillServes(h);
  });

  it("gives two attaches to one process the whole stream each, and refuses a pid that is not its child", async () => {
    const h = await startReady();
    const { pid, dir } = await launch(h, "read -r _; echo one; echo two");
    attach(h, 5, pid, dir);
    attach(h, 6, pid, dir);
    attach(h, 7, process.pid, dir);
    await eventually(() => endOf(h, 7) !== undefined, "the refusal");
    expect(endOf(h, 7)).toBe(PROC_END.refused);
    await writeOnceOpen(h, 5, Buffer.from("go\n"));
    await eventually(() => endOf(h, 5) !== undefined && endOf(h, 6) !== undefined, "both ends");
    expect([endOf(h, 5), endOf(h, 6)]).toEqual([PROC_END.ended, PROC_END.ended]);
    expect(streamed(h, 5).toString()).toBe("one\ntwo\n");
    expect(streamed(h, 6).toString()).toBe("one\ntwo\n");
    await stillServes(h);
  });

  it("detaching one of two attaches to a process leaves the other streaming (they share its directory's watch)", async () => {
    const h = await startReady();
    const { pid, dir } = await launch(h, "cat");
    attach(h, 12, pid, dir);
    attach(h, 13, pid, dir);
    h.child.stdin.write(h.writer.frame("U", 12));
    await eventually(() => endOf(h, 12) !== undefined, "the detach");
    await writeOnceOpen(h, 13, Buffer.from("still\n"));
    await eventually(() => streamed(h, 13).toString() === "still\n", "the echo on the other channel");
    expect(streamed(h, 12).toString()).toBe("");
    await stillServes(h);
  });

  it("writes no keystroke into a file a command put in place of the process's stdin FIFO", async () => {
    const h = await startReady();
    const { pid, dir } = await launch(h, "sleep 1000");
    await eventually(() => existsSync(join(dir, "holder")) && statSync(join(dir, "holder")).size > 0, "the holder");
    rmSync(join(dir, "in"));
    writeFileSync(join(dir, "in"), "");
    attach(h, 14, pid, dir);
    h.child.stdin.write(h.writer.frame("I", 14, Buffer.from("secret\n")));
    await eventually(() => acks(h, 14).length === 1, "the ack");
    expect(acks(h, 14)).toEqual([INPUT_STATUS.closed]);
    expect(readFileSync(join(dir, "in"), "utf8")).toBe("");
  });

  it("holds an input the process does not read (no ack), and acks it closed once the process is killed", async () => {
    const h = await startReady();
    const { pid, dir } = await launch(h, "sleep 1000");
    attach(h, 9, pid, dir);
    const full = Buffer.alloc(65536, 0x61);
    await writeOnceOpen(h, 9, full);
    // Its stdin's pipe is full now: this one waits in the helper, which serves on meanwhile.
    const acked = acks(h, 9).length;
    h.child.stdin.write(h.writer.frame("I", 9, Buffer.from("more\n")));
    await stillServes(h);
    expect(acks(h, 9)).toHaveLength(acked);
    process.kill(-pid, "SIGKILL");
    await eventually(() => endOf(h, 9) !== undefined, "the end");
    expect(acks(h, 9).slice(acked)).toEqual([INPUT_STATUS.closed]);
    expect(endOf(h, 9)).toBe(PROC_END.ended);
    expect(alive(pid)).toBe(false);
    // Its stdin's last reader (the holder, in the group) is gone too: nothing of the group is left.
    expect(() => process.kill(-pid, 0)).toThrow();
  });

  it("is not blocked by a FIFO put in place of a process's log or bound file", async () => {
    const h = await startReady();
    const logged = await launch(h, "sleep 1000");
    const bounded = await launch(h, "sleep 1000");
    for (const [dir, name] of [
      [logged.dir, "log"],
      [bounded.dir, "bound"],
    ] as const) {
      await eventually(() => existsSync(join(dir, name)), `its ${name}`);
      rmSync(join(dir, name));
      execFileSync("mkfifo", [join(dir, name)]);
    }
    attach(h, 15, logged.pid, logged.dir);
    attach(h, 16, bounded.pid, bounded.dir);
    // Opening a FIFO to read waits for a writer: the helper would wait there, serving nothing.
    await stillServes(h);
    expect(streamed(h, 15).length + streamed(h, 16).length).toBe(0);
  });

  it("skips only to a segment named as the writer names it (a planted log.<huge> neither wraps nor crashes)", async () => {
    const h = await startReady();
    const { pid, dir } = await launch(h, "read -r _; head -c 262144 /dev/zero; exec sleep 1000", 1 << 20);
    const [head, seg] = readFileSync(join(dir, "bound"), "utf8").trim().split(" ").map(BigInt) as [bigint, bigint];
    expect(head).toBe(262144n);
    attach(h, 17, pid, dir);
    await writeOnceOpen(h, 17, Buffer.from("go\n"));
    await eventually(() => streamed(h, 17).length === 262144, "the head");
    // Its first segment is not there (as when the bounder removed it); the next after it would start past 2^64
    // (wrapping into segment 0 again).
    rmSync(join(dir, "log.000000000000"), { force: true });
    const huge = (2n ** 64n + seg - 1n) / seg;
    writeFileSync(join(dir, `log.${huge}`), "planted");
    writeFileSync(join(dir, "log.1"), "planted");
    // Any change to the directory has the helper look for the next byte again.
    writeFileSync(join(dir, "touch"), "");
    // Two round trips: the first may be answered in the round that then reads the log; the second comes after it.
    await stillServes(h);
    await stillServes(h, 9996);
    h.child.stdin.write(h.writer.frame("U", 17));
    await eventually(() => endOf(h, 17) !== undefined, "the detach");
    expect(endOf(h, 17)).toBe(PROC_END.detached);
    expect(streamed(h, 17)).toEqual(Buffer.alloc(262144));
    await stillServes(h, 9997);
  });

  it("streams a process's stdout as o frames and its stderr apart as E frames, each exact across its bounded layout", async () => {
    const h = await startReady();
    // 1 MiB bound per stream: a 256 KiB head, then segments; 600 000 bytes on each, interleaved with binary bytes.
    const command = [
      "read -r _",
      "for i in 1 2 3; do printf 'out%d\\n' $i; printf 'err%d\\0\\377\\n' $i >&2; done",
      "head -c 600000 /dev/zero | tr '\\0' o",
      "head -c 600000 /dev/zero | tr '\\0' e >&2",
    ].join("; ");
    const { pid, dir } = await launch(h, command, 1 << 20, true);
    attach(h, 18, pid, dir, ATTACH_FLAG.stderrApart);
    await writeOnceOpen(h, 18, Buffer.from("go\n"));
    await eventually(() => endOf(h, 18) !== undefined, "the end");
    expect(endOf(h, 18)).toBe(PROC_END.ended);
    expect(streamed(h, 18, "o")).toEqual(Buffer.from(`out1\nout2\nout3\n${"o".repeat(600000)}`));
    const errs = [1, 2, 3].map((i) => Buffer.from([...Buffer.from(`err${i}`), 0, 0xff, 0x0a]));
    expect(streamed(h, 18, "E")).toEqual(Buffer.concat([...errs, Buffer.from("e".repeat(600000))]));
    // The tail segments of each log are there (the streams crossed their heads), and nothing after the end.
    expect(existsSync(join(dir, "err.000000000000"))).toBe(true);
    expect(h.frames[h.frames.findLastIndex((f) => f.id === 18)]!.type).toBe("x");
    await stillServes(h);
  });

  it("sends no E frame to an attach that did not ask for stderr apart", async () => {
    const h = await startReady();
    // It waits to be told to end: a process already ended and reaped when the attach comes is refused instead.
    const go = join(h.dir, "go-19");
    const { pid, dir } = await launch(
      h,
      `echo out; echo err >&2; until [ -e ${go} ]; do sleep 0.05; done`,
      1 << 20,
      true,
    );
    attach(h, 19, pid, dir);
    await eventually(() => streamed(h, 19, "o").toString() === "out\n", "its stdout");
    writeFileSync(go, "");
    await eventually(() => endOf(h, 19) !== undefined, "the end");
    expect(streamed(h, 19, "o").toString()).toBe("out\n");
    expect(streamed(h, 19, "E")).toHaveLength(0);
    await stillServes(h);
  });

  it("ends the helper with the protocol code on an attach with a flag it does not know", async () => {
    const h = await startReady();
    const { pid, dir } = await launch(h, "sleep 1000");
    attach(h, 20, pid, dir, 0x80);
    expect(await h.exited).toBe(6);
    expect(h.stderr()).toMatch(/attach flags 0x80/);
  });

  it("ends the helper with the protocol code on an attach of a channel already open", async () => {
    const h = await startReady();
    const { pid, dir } = await launch(h, "sleep 1000");
    attach(h, 8, pid, dir);
    attach(h, 8, pid, dir);
    expect(await h.exited).toBe(6);
    expect(h.stderr()).toMatch(/process channel 8 is already attached/);
  });
});
