/**
 * writeStderr (src/core/stderr.ts) with a stderr pipe nobody reads: a
 * message that does not fit is dropped at once (nothing queued in Node, so
 * nothing keeps the process alive), and the next message that fits says how
 * many bytes were dropped.
 */

import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { unreadPipe } from "../helpers/unread-pipe.js";

const stderrModule = new URL("../../dist/core/stderr.js", import.meta.url).href;

// Fills stderr to the last byte (4 KiB writes are all or nothing, so 1-byte ones finish it), writes 100 messages that cannot fit, reports, waits for a line on stdin, writes once more.
const script = `
const { writeStderr } = await import(${JSON.stringify(stderrModule)});
const { writeSync } = await import("node:fs");
void process.stderr;
const block = Buffer.alloc(4096, ".");
for (const size of [4096, 1]) for (;;) { try { writeSync(2, block, 0, size); } catch (error) { if (error.code === "EAGAIN") break; throw error; } }
for (let i = 0; i < 100; i++) writeStderr("dropped message " + String(i).padStart(2, "0") + "\\n");
process.stdout.write(JSON.stringify({ queued: process.stderr.writableLength }) + "\\n");
process.stdin.once("data", () => { writeStderr("after the drain\\n"); process.stdin.destroy(); });
`;

describe("writeStderr with a pipe nobody reads", () => {
  it("drops what does not fit without queueing it, then says how much was dropped", async () => {
    const pipe = unreadPipe();
    try {
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        stdio: ["pipe", "pipe", pipe.writeFd],
      });
      const exit = new Promise<number | string>((resolve) =>
        child.once("close", (code, signal) => resolve(code ?? signal ?? "unknown")),
      );
      const report = await new Promise<string>((resolve) => child.stdout!.once("data", (c: Buffer) => resolve(`${c}`)));
      expect(JSON.parse(report)).toEqual({ queued: 0 });
      expect(pipe.drain()).toMatch(/^\.+$/);
      child.stdin!.write("go\n");
      expect(await exit).toBe(0);
      // 100 messages of 19 bytes each.
      expect(pipe.drain()).toBe(
        "shellwright: 1900 bytes of earlier messages to stderr were dropped (nobody read them)\nafter the drain\n",
      );
    } finally {
      pipe.close();
    }
  });
});
