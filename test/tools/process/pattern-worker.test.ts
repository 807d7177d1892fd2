/**
 * A model's pattern cannot stall the owner: `process wait` with patterns that
 * backtrack exponentially in JavaScript ((a+)+$ on 48 a's and a b, (x+x+)+y on
 * 40 x's) runs while another session's calls complete, ends by its timeout,
 * and is interrupted on request; a pattern RE2 cannot take gets a clear error.
 */

import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createEnvironment, type Environment } from "../../../src/index.js";
import { callTool } from "../../../src/tools/registry.js";
import type { ToolResult } from "../../../src/tools/shared/tool-definition.js";
import { noStaticHelper, skipAllUnless } from "../../helpers/native-helper.js";

describe("pattern waits run off the owner's event loop", () => {
  skipAllUnless(noStaticHelper);
  let session: Environment;
  let other: Environment;
  const call = (args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult> =>
    callTool("process", args, { session, ...(signal ? { signal } : {}) });

  /** A PTY process that printed `line` and sleeps; resolves once the line is on its screen. */
  const printed = async (line: string): Promise<string> => {
    const started = await callTool(
      "terminal",
      { command: `printf '%s\\n' ${line}; exec sleep 600`, background: true, pty: true },
      { session },
    );
    const id = started.session_id as string;
    await vi.waitFor(async () => expect((await call({ action: "screen", session_id: id })).screen).toContain(line), {
      timeout: 30_000,
      interval: 50,
    });
    return id;
  };

  beforeAll(async () => {
    [session, other] = await Promise.all([
      createEnvironment({ backend: "local" }),
      createEnvironment({ backend: "local" }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([session?.close(), other?.close()]);
  });

  it("(a+)+$ on 48 a's and a b: another session's calls complete while it waits; it ends when interrupted", async () => {
    const id = await printed(`${"a".repeat(48)}b`);
    const abort = new AbortController();
    let answer: ToolResult | undefined;
    const waiting = call({ action: "wait", session_id: id, pattern: "(a+)+$", timeout: 600 }, abort.signal).then(
      (r) => (answer = r),
    );
    for (let i = 0; i < 3; i++) expect((await other.execute(`echo alive-${i}`)).output).toBe(`alive-${i}\n`);
    // The other session's three calls came back, and the wait is still pending.
    expect(answer).toBeUndefined();
    abort.abort();
    await waiting;
    expect(answer).toMatchObject({ status: "interrupted" });
    expect(answer!.output).toContain("a".repeat(48));
  });

  it("(x+x+)+y on 40 x's ends by its timeout, with the output it saw", async () => {
    const id = await printed("x".repeat(40));
    const answer = await call({ action: "wait", session_id: id, pattern: "(x+x+)+y", timeout: 2 });
    expect(answer).toMatchObject({ status: "timeout", timeout_note: "No match for (x+x+)+y within 2s" });
    expect(answer.output).toContain("x".repeat(40));
  });

  it("a lookahead or a backreference is refused, naming the pattern and why", async () => {
    const id = await printed("ready");
    for (const pattern of ["(?=r)ready", "(r)\\1"]) {
      const answer = await call({ action: "wait", session_id: id, pattern, timeout: 5 });
      expect(answer.error).toContain(`pattern ${JSON.stringify(pattern)} cannot be used`);
      expect(answer.error).toMatch(/RE2 syntax/);
    }
    // The same process still answers a pattern RE2 takes.
    expect(await call({ action: "wait", session_id: id, pattern: "^ready$", timeout: 30 })).toMatchObject({
      status: "matched",
    });
  });

  it("a JavaScript-only escape is translated: \\u001b-free output, \\d and named groups work", async () => {
    const id = await printed("build-42-ok");
    const answer = await call({ action: "wait", session_id: id, pattern: "build-(?<n>\\d+)-\\u006fk", timeout: 30 });
    expect(answer.status).toBe("matched");
  });
});

describe("the pattern worker in a program run as an ES module string", () => {
  it("matches: the worker does not inherit --input-type=module (its script is CommonJS)", async () => {
    // The built module (npm test builds dist/ first): how examples and users load it.
    const worker = new URL("../../../dist/tools/process/pattern-worker.js", import.meta.url).href;
    const script = `
      const { PatternWorker } = await import(${JSON.stringify(worker)});
      const worker = new PatternWorker();
      await new Promise((resolve, reject) => {
        worker.watch("4[0-9]", "m", "6 * 7\\n42\\n", () => resolve(), reject).catch(reject);
      });
      await worker.close();
      console.log("matched");`;
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      timeout: 60_000,
    });
    expect(stdout.trim()).toBe("matched");
  }, 90_000);

  it("keeps its owner alive while a watch is pending, and not after: a program that never closes it exits", async () => {
    const worker = new URL("../../../dist/tools/process/pattern-worker.js", import.meta.url).href;
    // No close(): a CLI that leaves its named session open (and so the worker) must still exit.
    const script = `
      const { PatternWorker } = await import(${JSON.stringify(worker)});
      const worker = new PatternWorker();
      const watch = await worker.watch("^ready$", "m", "", () => console.log("matched"), (error) => console.log(error));
      setTimeout(() => watch.feed("ready\\n"), 200).unref();`;
    const run = promisify(execFile);
    // Without the fix: the first never matched (nothing held the thread), or the process never exited (killed).
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { timeout: 60_000 });
    expect(stdout.trim()).toBe("matched");
  }, 90_000);
});
