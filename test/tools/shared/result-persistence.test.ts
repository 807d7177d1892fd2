/** Layers 2 and 3 of tool-result persistence, through a real session. */

import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../../src/index.js";
import {
  enforceTurnBudget,
  locationNote,
  persistedMessage,
  persistLargeResult,
  previewOf,
  resultsDir,
  resultSize,
  saveText,
  thresholdFor,
} from "../../../src/tools/shared/result-persistence.js";
import { toolSettings } from "../../../src/tools/shared/tool-settings.js";
import type { ToolResult } from "../../../src/tools/shared/tool-definition.js";
import { remoteStyleBackend } from "../remote-style.js";

let session: Environment;
let hostDir: string;

beforeAll(async () => {
  session = await createEnvironment({});
  hostDir = mkdtempSync(join(tmpdir(), "sw-host-results-"));
});
afterAll(async () => {
  await session.close();
  rmSync(hostDir, { recursive: true, force: true });
});

/** A result whose JSON form is exactly `size` characters. */
const resultOfSize = (size: number): ToolResult => ({ output: "x".repeat(size - '{"output":""}'.length) });
const savedPath = (result: ToolResult, field = "output"): string =>
  /saved to: (\S+)/.exec(result[field] as string)![1]!;

describe("preview", () => {
  it("cuts at a line end in the second half, else at the limit", () => {
    expect(previewOf("short", 10)).toBe("short");
    expect(previewOf("aaaaaaaa\nbbbbbbbbbb", 15)).toBe("aaaaaaaa");
    expect(previewOf("aa\nbbbbbbbbbbbbbbbb", 15)).toBe("aa\nbbbbbbbbbbbb");
  });

  it("has the format models know", () => {
    const text = `${"line\n".repeat(400)}`;
    const message = persistedMessage(text, { path: "/tmp/r/abc.txt", where: "backend" }, session, 1500);
    const preview = "line\n".repeat(300).slice(0, -1);
    expect(message).toBe(
      [
        "<persisted-output>",
        "This tool result was too large (2,000 characters, 2.0 KB).",
        "Full output saved to: /tmp/r/abc.txt",
        "Use the read_file tool with offset and limit to access specific sections of this output.",
        "",
        `Preview (first ${preview.length} chars):`,
        preview,
        "...",
        "</persisted-output>",
      ].join("\n"),
    );
    expect(persistedMessage("y".repeat(3 * 1024 * 1024), undefined, session, 10)).toBe(
      `${"y".repeat(10)}\n\n[Truncated: tool response was 3,145,728 chars. Full output could not be saved in the backend or on the host.]`,
    );
  });
});

describe("layer 2", () => {
  it("persists above the threshold only, exactly", async () => {
    const at = resultOfSize(100_000);
    expect(resultSize(at)).toBe(100_000);
    expect(await persistLargeResult("terminal", at, { session })).toBe(at);
    const persisted = await persistLargeResult("terminal", resultOfSize(100_001), { session, callId: "above" });
    // The saved text is the output field: 100 001 minus the 13 characters of {"output":""}.
    expect(persisted.output).toMatch(
      /^<persisted-output>\nThis tool result was too large \(99,988 characters, 97\.6 KB\)\.\n/,
    );
  });

  it("keeps the other fields and saves the big one whole, byte for byte", async () => {
    const output = `${"é🙂 line\n".repeat(20_000)}`;
    const persisted = await persistLargeResult(
      "terminal",
      { output, exit_code: 3 },
      { session, callId: "keep-fields" },
    );
    expect(persisted.exit_code).toBe(3);
    const path = savedPath(persisted);
    expect(path).toBe(`${resultsDir(session)}/keep-fields.txt`);
    expect(readFileSync(path, "utf8")).toBe(output);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("writes any size through stdin, never the command line (5 MB)", async () => {
    const text = "z".repeat(5 * 1024 * 1024);
    const saved = await saveText(session, text, { id: "five-mb" });
    expect(saved).toEqual({ path: `${resultsDir(session)}/five-mb.txt`, where: "backend" });
    expect(statSync(saved!.path).size).toBe(text.length);
  });

  it("writes the same way through a remote-style transport (stdin embedded in the script)", async () => {
    const remote = await remoteStyleBackend.create();
    try {
      const text = `${"ü".repeat(300_000)}\nend`;
      const saved = await saveText(remote, text, { id: "remote" });
      expect(saved).toEqual({ path: `${resultsDir(remote)}/remote.txt`, where: "backend" });
      expect(readFileSync(saved!.path, "utf8")).toBe(text);
    } finally {
      await remote.close();
    }
  });

  it("points the model at a file saved on the host only where the session shares this machine's files", async () => {
    const onHost = { path: "/h/r.txt", where: "host" as const, backendError: "disk full" };
    expect(session.sharesHostFiles).toBe(true);
    expect(locationNote(onHost, session)).toMatch(/^Full output saved to: \/h\/r\.txt\nUse the read_file tool/);
    const remote = await remoteStyleBackend.create();
    try {
      expect(remote.sharesHostFiles).toBe(false);
      expect(locationNote(onHost, remote)).toMatch(
        /^Full output saved on the host, outside the backend \(writing it into the backend failed: disk full\): \/h\/r\.txt\nThe tools cannot read it there/,
      );
    } finally {
      await remote.close();
    }
  });

  it("never persists read_file, and honours per-tool thresholds", async () => {
    expect(thresholdFor("read_file", toolSettings({ toolThresholdChars: { read_file: 10 } }))).toBe(Infinity);
    const big = resultOfSize(300_000);
    expect(await persistLargeResult("read_file", big, { session })).toBe(big);
    const settings = toolSettings({ toolThresholdChars: { search_files: 50 } });
    expect((await persistLargeResult("search_files", resultOfSize(51), { session, settings })).output).toMatch(
      /^<persisted-output>/,
    );
    expect(await persistLargeResult("terminal", resultOfSize(51), { session, settings })).toEqual(resultOfSize(51));
  });

  it("falls back to the host directory when the write inside the backend fails, and says so", async () => {
    const blocked = await createEnvironment({});
    try {
      // A file where the results directory should be: mkdir -p fails.
      await blocked.execute(`touch ${resultsDir(blocked)}`);
      const settings = toolSettings({ hostResultsDir: hostDir });
      const persisted = await persistLargeResult("terminal", resultOfSize(100_001), {
        session: blocked,
        settings,
        callId: "fallback",
      });
      const path = savedPath(persisted);
      expect(path).toBe(join(hostDir, "fallback.txt"));
      expect(readFileSync(path, "utf8")).toBe(resultOfSize(100_001).output);
      expect(statSync(path).mode & 0o777).toBe(0o600);
    } finally {
      await blocked.close();
    }
  });

  it("refuses a host directory others can read, and says the output was not saved", async () => {
    const blocked = await createEnvironment({});
    const open = mkdtempSync(join(tmpdir(), "sw-open-results-"));
    try {
      chmodSync(open, 0o755);
      await blocked.execute(`touch ${resultsDir(blocked)}`);
      const persisted = await persistLargeResult("terminal", resultOfSize(100_001), {
        session: blocked,
        settings: toolSettings({ hostResultsDir: open }),
      });
      expect(persisted.output).toMatch(
        /\[Truncated: tool response was 99,988 chars\. Full output could not be saved in the backend or on the host\.\]$/,
      );
      expect(readdirSync(open)).toEqual([]);
    } finally {
      await blocked.close();
      rmSync(open, { recursive: true, force: true });
    }
  });

  it("names the file safely whatever the call id", async () => {
    const saved = await saveText(session, "data", { id: "../../etc/passwd x" });
    expect(saved!.path).toBe(`${resultsDir(session)}/r.._.._etc_passwd_x.txt`);
  });
});

describe("layer 3", () => {
  const entry = (toolName: string, size: number, callId: string) => ({ toolName, callId, result: resultOfSize(size) });

  it("persists the largest results first until the turn fits the budget", async () => {
    const turn = [
      entry("terminal", 60_000, "a"),
      entry("terminal", 90_000, "b"),
      entry("terminal", 30_000, "c"),
      entry("terminal", 80_000, "d"),
    ];
    const out = await enforceTurnBudget(turn, { session });
    const persisted = out.map((e) => (e.result.output as string).startsWith("<persisted-output>"));
    // 260 000 > 200 000: persisting b (90 000) leaves about 172 000: enough.
    expect(persisted).toEqual([false, true, false, false]);
    expect(turn[1]!.result.output).toMatch(/^x+$/); // the input is not changed
    expect(out.reduce((sum, e) => sum + resultSize(e.result), 0)).toBeLessThanOrEqual(200_000);
  });

  it("handles six results of 42 000 (the hermes regression)", async () => {
    const turn = Array.from({ length: 6 }, (_, i) => entry("terminal", 42_000, `six-${i}`));
    const out = await enforceTurnBudget(turn, { session });
    const count = out.filter((e) => (e.result.output as string).startsWith("<persisted-output>")).length;
    expect(count).toBe(2);
    expect(out.reduce((sum, e) => sum + resultSize(e.result), 0)).toBeLessThanOrEqual(200_000);
  });

  it("skips results already persisted and read_file results", async () => {
    const already = await persistLargeResult("terminal", resultOfSize(150_000), { session, callId: "already" });
    const turn = [
      { toolName: "terminal", result: already },
      entry("read_file", 150_000, "rf"),
      entry("terminal", 100_000, "t"),
    ];
    const out = await enforceTurnBudget(turn, { session, settings: toolSettings({ turnBudgetChars: 100_000 }) });
    expect(out[0]!.result).toBe(already);
    expect(out[1]!.result.output).toMatch(/^x+$/);
    expect(out[2]!.result.output).toMatch(/^<persisted-output>/);
  });
});
