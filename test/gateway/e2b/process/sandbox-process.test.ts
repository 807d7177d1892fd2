/**
 * The gateway's token masked in a process's events before they fan out:
 * split between chunks, in either stream, held back at a chunk's end only as
 * long as it could still be the token, and in the end's error.
 */

import { describe, expect, it } from "vitest";
import { SandboxProcess, type ProcessUpdate } from "../../../../src/gateway/e2b/process/sandbox-process.js";
import { TokenMask } from "../../../../src/gateway/token-mask.js";

const TOKEN = "tok-0123456789abcdef";

function watched(): { process: SandboxProcess; text: (kind: string) => string; updates: ProcessUpdate[] } {
  const process = new SandboxProcess(1000, undefined, { cmd: "x", args: [], envs: {} }, false, new TokenMask(TOKEN));
  const updates: ProcessUpdate[] = [];
  process.watch((update) => updates.push(update));
  const text = (kind: string): string =>
    updates.map((u) => (u.kind === "data" && u.output === kind ? new TextDecoder().decode(u.data) : "")).join("");
  return { process, text, updates };
}

describe("SandboxProcess masking", () => {
  it("masks the token cut between chunks, in each stream on its own", () => {
    const { process, text } = watched();
    process.output("stdout", `a ${TOKEN.slice(0, 7)}`);
    process.output("stderr", `${TOKEN} b`);
    process.output("stdout", `${TOKEN.slice(7)} c`);
    process.finish({ exitCode: 0, exited: true, status: "exit status 0" });
    expect(text("stdout")).toBe("a [REDACTED] c");
    expect(text("stderr")).toBe("[REDACTED] b");
  });

  it("sends a held-back start of the token that never finished before the end", () => {
    const { process, text, updates } = watched();
    process.output("stdout", `x ${TOKEN.slice(0, 5)}`);
    expect(text("stdout")).toBe("x ");
    process.finish({ exitCode: 0, exited: true, status: "exit status 0" });
    expect(text("stdout")).toBe(`x ${TOKEN.slice(0, 5)}`);
    expect(updates.at(-1)?.kind).toBe("end");
  });

  it("masks the token in the end's error", () => {
    const { process, updates } = watched();
    process.finish({ exitCode: -1, exited: false, status: "error", error: `failed: ${TOKEN}` });
    const end = updates.at(-1);
    expect(end?.kind === "end" && end.end.error).toBe("failed: [REDACTED]");
  });
});
