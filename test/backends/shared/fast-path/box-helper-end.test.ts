/**
 * A helper let go while its last output is being handed over: the client
 * kills it from inside its reader (a frame that broke the protocol, a
 * failure), and in text mode one chunk of its stdout holds several frames.
 * The frames after the kill go nowhere; nothing is written to the ended
 * stream (once an ERR_STREAM_WRITE_AFTER_END nobody listened for: an
 * uncaught exception in the caller's process). The helper here is a real
 * process that prints its lines in one write.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import type { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { startBoxHelper, type BoxExec } from "../../../../src/backends/shared/fast-path/box-helper.js";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

/** A box whose helper is `sh -c SCRIPT`. */
function boxRunning(script: string, text: boolean): BoxExec {
  return {
    text,
    spawn: () => {
      const child = spawn("sh", ["-c", script], { stdio: "pipe" });
      children.push(child);
      return {
        stdin: child.stdin,
        stdout: child.stdout,
        stderr: child.stderr,
        closed: once(child, "close").then(() => undefined),
        stop: () => void child.stdin.end(),
      };
    },
    run: () => Promise.resolve({ exitCode: 0, output: "" }),
  };
}

const launch = Promise.resolve({ helper: "/nonexistent/swmux", sessionMark: "mark", snapshot: "/s", workDir: "/w" });

describe("the helper's channel, killed from its reader", () => {
  it.each([
    // Three base64 lines in one write: one chunk for the text decoder, which hands them on one by one.
    ["text mode", true, "printf 'QUJD\\nREVG\\nR0hJ\\n'; cat >/dev/null"],
    ["bytes", false, "printf 'ABCDEFGHI'; cat >/dev/null"],
  ])("takes nothing more once killed (%s)", async (_what, text, script) => {
    const helper = startBoxHelper(boxRunning(script, text), launch);
    const output = helper.output as PassThrough;
    const seen: string[] = [];
    output.on("data", (chunk: Buffer) => {
      seen.push(chunk.toString("latin1"));
      helper.kill();
    });
    await helper.closed;
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.length).toBe(1);
    expect(output.errored).toBeNull();
    expect(output.writableEnded).toBe(true);
  });
});
