/** Parsing what the background-process poll script prints. */

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { shellQuote } from "../../../src/core/script.js";
import {
  parsePollOutput,
  processFiles,
  waitScript,
  writeStdinScript,
} from "../../../src/tools/process/process-scripts.js";

describe("parsePollOutput", () => {
  it("reads headers and base64 bodies, ignoring stray lines", () => {
    const body = Buffer.from("héllo\n").toString("base64");
    const text = `noise\n__SW_PROC 0 running - 7 0\n${body}\n\n__SW_PROC 1 exited 3 10 10\n\n`;
    const answers = parsePollOutput(text);
    expect(answers).toHaveLength(2);
    expect(answers[0]).toMatchObject({ index: 0, running: true, exitCode: undefined, size: 7, start: 0 });
    expect(Buffer.from(answers[0]!.data).toString("utf8")).toBe("héllo\n");
    expect(answers[1]).toMatchObject({ index: 1, running: false, exitCode: 3, size: 10, start: 10 });
    expect(answers[1]!.data).toHaveLength(0);
  });
});

describe("writeStdinScript", () => {
  it("waits for a holder the wrapper has not written yet, instead of taking the stdin as closed", () => {
    // The launch returns once the wrapper is started; under load its first line (the holder) comes later.
    const dir = mkdtempSync(join(tmpdir(), "sw-holder-"));
    try {
      const files = processFiles(dir);
      const input = shellQuote(files.input);
      const script = [
        `mkfifo ${input}`,
        `exec 3<>${input}`,
        `(sleep 0.4; echo 12345 > ${shellQuote(files.holder)}.tmp; mv ${shellQuote(files.holder)}.tmp ${shellQuote(files.holder)}) &`,
        `printf Hello | { ${writeStdinScript(files)}; }`,
        "echo rc=$?",
        "read -r -t 2 -N 5 got <&3; echo got=$got",
      ].join("\n");
      const result = spawnSync("bash", ["-c", script], { encoding: "utf8", timeout: 10_000 });
      expect(result.stdout).toBe("rc=0\ngot=Hello\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("still says closed at once when the stdin was closed (an empty holder)", () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-holder-"));
    try {
      const files = processFiles(dir);
      const script = `mkfifo ${shellQuote(files.input)}; : > ${shellQuote(files.holder)}\nprintf x | { ${writeStdinScript(files)}; }; echo rc=$?`;
      const result = spawnSync("bash", ["-c", script], { encoding: "utf8", timeout: 10_000 });
      expect(result.stdout).toBe("stdin closed\nrc=3\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("waitScript", () => {
  /** Stands for the wrapper's pid in the script, replaced by the stand-in's. */
  const PID = 987654321;
  /** Runs a stand-in wrapper (its own group, the lock held while it lives, ends after 0.3 s) and waits for it. */
  function waitFor(prelude: string, intervalMs: number, checks: number, lockAfter = ""): string {
    const dir = mkdtempSync(join(tmpdir(), "sw-wait-"));
    try {
      const files = processFiles(dir);
      const lock = shellQuote(files.lock);
      // As the launch script does: the lock gets its name once it is held.
      const wrapper = `${lockAfter}exec 9> ${lock}.tmp; flock -x 9; mv ${lock}.tmp ${lock}; sleep 0.3; echo 4 > ${shellQuote(files.exit)}`;
      const script = [
        prelude,
        `: > ${shellQuote(files.log)}`,
        `set -m; (${wrapper}) & p=$!; set +m`,
        "sleep 0.1",
        waitScript({ index: 0, files, pgid: PID, offset: 0, maxBytes: 100 }, intervalMs, checks).replaceAll(
          String(PID),
          "$p",
        ),
      ].join("\n");
      return spawnSync("bash", ["-c", script], { encoding: "utf8", timeout: 20_000 }).stdout;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it("is woken by the wrapper's end through its lock: checks every 10 minutes never come", () => {
    expect(waitFor("", 600_000, 6)).toMatch(/^__SW_PROC 0 exited 4 0 0$/m);
  });

  it("is woken by the end when it started before the wrapper held its lock (a busy machine)", () => {
    // The wrapper takes its lock 0.5 s after the wait began: the wait looks for it instead of falling back to
    // checks every 10 minutes (the process registry's test on the sandbox waited past its timeout).
    expect(waitFor("", 600_000, 6, "sleep 0.5; ")).toMatch(/^__SW_PROC 0 exited 4 0 0$/m);
  });

  it("without a flock that can wait (busybox's has no -w), the checks find the end", () => {
    const fake = mkdtempSync(join(tmpdir(), "sw-noflock-"));
    try {
      const prelude = `printf '#!/bin/sh\\n[ "$1" = -x ] && exit 0\\necho usage >&2; exit 1\\n' > ${fake}/flock; chmod +x ${fake}/flock; PATH=${fake}:$PATH`;
      expect(waitFor(prelude, 20, 500)).toMatch(/^__SW_PROC 0 exited 4 0 0$/m);
    } finally {
      rmSync(fake, { recursive: true, force: true });
    }
  });
});
