/** Every method of the AI SDK sandbox adapter, against a real local session. */

import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Experimental_SandboxSession } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxSession } from "../../src/ai/sandbox.js";
import { createEnvironment, InvalidOptionError, type Environment } from "../../src/index.js";
import { alive, eventually } from "../helpers/processes.js";

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString("utf8");

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  const parts: Uint8Array[] = [];
  for await (const part of stream) parts.push(part);
  return Buffer.concat(parts).toString("utf8");
}

/**
 * Reads until the text seen so far is `expected` (chunks may split anywhere).
 * A line arrives whole, newline included, while the command still runs.
 */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, expected: string): Promise<string> {
  let seen = "";
  while (seen.length < expected.length) {
    const chunk = await reader.read();
    if (chunk.done) break;
    seen += text(chunk.value);
  }
  return seen;
}

describe("createSandboxSession", () => {
  let scratch: string;
  let session: Environment;
  let sandbox: Experimental_SandboxSession;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "shellwright-ai-test-"));
    session = await createEnvironment({ cwd: scratch });
    sandbox = createSandboxSession(session);
    // The session's own cwd moves; the sandbox's base directory must not.
    await session.execute("cd /");
  });
  afterAll(async () => {
    await session.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("describes itself with the backend and the base directory", () => {
    expect(sandbox.description).toContain("Shellwright local backend");
    expect(sandbox.description).toContain(`Commands start in ${scratch}`);
    expect(createSandboxSession(session, { description: "mine" }).description).toBe("mine");
    expect(() => createSandboxSession(session, { descripton: "typo" } as never)).toThrow(
      /Unknown createSandboxSession option "descripton"/,
    );
  });

  describe("run", () => {
    it("returns stdout, stderr and the exit code separately, from the base directory", async () => {
      const result = await sandbox.run({ command: "pwd; echo oops >&2; echo out; exit 4" });
      expect(result).toEqual({ exitCode: 4, stdout: `${scratch}\nout\n`, stderr: "oops\n" });
    });

    it("keeps a cd or export inside a command to that command", async () => {
      await sandbox.run({ command: "mkdir -p sub && cd sub && export RUN_ONLY=1" });
      expect((await sandbox.run({ command: 'pwd; echo "[${RUN_ONLY:-}]"' })).stdout).toBe(`${scratch}\n[]\n`);
      expect(session.cwd).toBe("/");
    });

    it("runs in workingDirectory, relative to the base directory", async () => {
      mkdirSync(join(scratch, "wd"), { recursive: true });
      expect((await sandbox.run({ command: "pwd", workingDirectory: "wd" })).stdout).toBe(`${join(scratch, "wd")}\n`);
      expect((await sandbox.run({ command: "pwd", workingDirectory: "/tmp" })).stdout).toBe("/tmp\n");
      expect((await sandbox.run({ command: "pwd", workingDirectory: "no-such-dir" })).exitCode).toBe(126);
    });

    it("passes env values exactly, and never on a command line", async () => {
      const secret = `s3cr3t-${randomBytes(6).toString("hex")} with 'quotes' $HOME \\ and\nnewline`;
      const probe = [
        'printenv SECRET_VALUE > "$TMPDIR_PROBE/pattern"',
        'printf %s "$SECRET_VALUE" > "$TMPDIR_PROBE/value"',
        'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f" 2>/dev/null; echo; done > "$TMPDIR_PROBE/cmdlines"',
        'echo "$OTHER"',
      ].join("\n");
      const result = await sandbox.run({
        command: probe,
        env: { SECRET_VALUE: secret, OTHER: "two", TMPDIR_PROBE: scratch },
      });
      expect(result).toMatchObject({ exitCode: 0, stdout: "two\n" });
      expect(readFileSync(join(scratch, "value"), "utf8")).toBe(secret);
      expect(readFileSync(join(scratch, "cmdlines"), "utf8")).not.toContain("s3cr3t-");
      // The variables were for that command only, and its stdin was empty.
      expect((await sandbox.run({ command: 'echo "[${SECRET_VALUE:-}]"; cat', env: { X: "1" } })).stdout).toBe("[]\n");
    });

    it("rejects bad options, naming them", async () => {
      await expect(sandbox.run({ command: "" })).rejects.toThrow(InvalidOptionError);
      await expect(sandbox.run({ command: "true", env: { "BAD-NAME": "x" } })).rejects.toThrow(
        /env has an invalid variable name "BAD-NAME"/,
      );
      await expect(sandbox.run({ command: "true", timeout: 5 } as never)).rejects.toThrow(
        /Unknown run option "timeout"/,
      );
    });

    it("kills the command when aborted and rejects with the reason", async () => {
      const controller = new AbortController();
      const pidFile = join(scratch, "run-abort.pid");
      const running = sandbox.run({
        command: `bash -c 'echo $$ > ${pidFile}; exec sleep 300'`,
        abortSignal: controller.signal,
      });
      await eventually(
        () => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"),
        "the command to start",
      );
      const pid = Number(readFileSync(pidFile, "utf8"));
      controller.abort(new Error("stop now"));
      await expect(running).rejects.toThrow("stop now");
      await eventually(() => !alive(pid), "the aborted command to end");
    });
  });

  describe("spawn", () => {
    it("streams stdout while the process runs, then stderr and the exit code", async () => {
      const gate = join(scratch, "spawn-gate");
      const process = await sandbox.spawn({
        command: `echo first; echo warn >&2; while [ ! -e ${gate} ]; do sleep 0.05; done; echo second; exit 7`,
      });
      expect(process.pid).toBeUndefined();
      const reader = process.stdout.getReader();
      expect(await readUntil(reader, "first\n")).toBe("first\n");
      writeFileSync(gate, "");
      let rest = "";
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += text(chunk.value);
      expect(rest).toBe("second\n");
      expect(await readAll(process.stderr)).toBe("warn\n");
      expect(await process.wait()).toEqual({ exitCode: 7 });
    });

    it("kill() ends the process tree; wait() then gives the interrupt exit code", async () => {
      const pidFile = join(scratch, "spawn-kill.pid");
      const process = await sandbox.spawn({ command: `bash -c 'echo $$ > ${pidFile}; echo up; exec sleep 300'` });
      const reader = process.stdout.getReader();
      expect(await readUntil(reader, "up\n")).toBe("up\n");
      const pid = Number(readFileSync(pidFile, "utf8"));
      await process.kill();
      await process.kill();
      expect(alive(pid)).toBe(false);
      expect(await process.wait()).toEqual({ exitCode: 130 });
    });

    it("abortSignal kills the process and wait() rejects with the reason", async () => {
      const controller = new AbortController();
      const process = await sandbox.spawn({ command: "echo up; sleep 300", abortSignal: controller.signal });
      expect(await readUntil(process.stdout.getReader(), "up\n")).toBe("up\n");
      controller.abort(new Error("aborted by caller"));
      await expect(process.wait()).rejects.toThrow("aborted by caller");
    });

    it("refuses stdin: true before starting anything", async () => {
      const marker = join(scratch, "should-not-exist");
      await expect(sandbox.spawn({ command: `touch ${marker}`, stdin: true })).rejects.toThrow(
        /stdin: true is not supported/,
      );
      expect(existsSync(marker)).toBe(false);
    });

    it("passes env and workingDirectory like run", async () => {
      const process = await sandbox.spawn({
        command: 'echo "$GREETING from $(basename "$PWD")"',
        env: { GREETING: "hello" },
        workingDirectory: "wd",
      });
      expect(await readAll(process.stdout)).toBe("hello from wd\n");
      expect(await process.wait()).toEqual({ exitCode: 0 });
    });
  });

  describe("files", () => {
    const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);

    it("writes and reads bytes exactly, also past the session's output limit", async () => {
      await sandbox.writeBinaryFile({ path: "bin/all.bytes", content: allBytes });
      expect(readFileSync(join(scratch, "bin/all.bytes"))).toEqual(Buffer.from(allBytes));
      expect(await sandbox.readBinaryFile({ path: "bin/all.bytes" })).toEqual(allBytes);

      const big = new Uint8Array(randomBytes(300_000));
      await sandbox.writeBinaryFile({ path: join(scratch, "big.bin"), content: big });
      expect(Buffer.compare(readFileSync(join(scratch, "big.bin")), Buffer.from(big))).toBe(0);
      const back = await sandbox.readBinaryFile({ path: "big.bin" });
      expect(back?.length).toBe(big.length);
      expect(Buffer.compare(Buffer.from(back!), Buffer.from(big))).toBe(0);
    });

    it("streams: readFile and writeFile", async () => {
      const content = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("part one, "));
          controller.enqueue(new TextEncoder().encode("part two\n"));
          controller.close();
        },
      });
      await sandbox.writeFile({ path: "streamed.txt", content });
      expect(readFileSync(join(scratch, "streamed.txt"), "utf8")).toBe("part one, part two\n");
      expect(await readAll((await sandbox.readFile({ path: "streamed.txt" }))!)).toBe("part one, part two\n");
      expect(await sandbox.readFile({ path: "missing.txt" })).toBeNull();
    });

    it("reads and writes text, with line ranges and encodings", async () => {
      await sandbox.writeTextFile({ path: "lines.txt", content: "one\ntwo\nthree\nfour" });
      expect(await sandbox.readTextFile({ path: "lines.txt" })).toBe("one\ntwo\nthree\nfour");
      expect(await sandbox.readTextFile({ path: "lines.txt", startLine: 2, endLine: 3 })).toBe("two\nthree\n");
      expect(await sandbox.readTextFile({ path: "lines.txt", startLine: 3, endLine: 99 })).toBe("three\nfour");
      expect(await sandbox.readTextFile({ path: "lines.txt", endLine: 1 })).toBe("one\n");

      await sandbox.writeTextFile({ path: "latin1.txt", content: "café", encoding: "latin1" });
      expect(readFileSync(join(scratch, "latin1.txt"))).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      expect(await sandbox.readTextFile({ path: "latin1.txt", encoding: "latin1" })).toBe("café");
      await sandbox.writeTextFile({ path: "utf16.txt", content: "hé", encoding: "utf-16le" });
      expect(await sandbox.readTextFile({ path: "utf16.txt", encoding: "utf-16le" })).toBe("hé");

      await expect(sandbox.readTextFile({ path: "lines.txt", encoding: "klingon" })).rejects.toThrow(
        /encoding "klingon"/,
      );
      await expect(sandbox.readTextFile({ path: "lines.txt", startLine: 0 })).rejects.toThrow(
        /startLine must be a line number from 1, got 0/,
      );
      await expect(sandbox.readTextFile({ path: "lines.txt", startLine: 3, endLine: 2 })).rejects.toThrow(
        /endLine \(2\) must not be before startLine \(3\)/,
      );
      expect(await sandbox.readTextFile({ path: "nope.txt" })).toBeNull();
    });

    it("overwrites files, creates parent directories, refuses directories", async () => {
      await sandbox.writeTextFile({ path: "deep/er/file.txt", content: "v1" });
      await sandbox.writeTextFile({ path: "deep/er/file.txt", content: "v2" });
      expect(readFileSync(join(scratch, "deep/er/file.txt"), "utf8")).toBe("v2");
      await expect(sandbox.writeTextFile({ path: "deep", content: "x" })).rejects.toThrow(/deep is a directory/);
      await expect(sandbox.readBinaryFile({ path: "deep" })).rejects.toThrow(/deep is a directory/);
      await sandbox.writeTextFile({ path: "-dash.txt", content: "dash" });
      expect(readFileSync(join(scratch, "-dash.txt"), "utf8")).toBe("dash");
    });

    it("stat follows symlinks and reports missing paths as null", async () => {
      writeFileSync(join(scratch, "five.txt"), "12345");
      symlinkSync(join(scratch, "five.txt"), join(scratch, "five.link"));
      expect(await sandbox.stat({ path: "five.txt" })).toEqual({ type: "file", size: 5 });
      expect(await sandbox.stat({ path: "five.link" })).toEqual({ type: "file", size: 5 });
      expect(await sandbox.stat({ path: "deep" })).toMatchObject({ type: "directory" });
      expect(await sandbox.stat({ path: "/dev/null" })).toMatchObject({ type: "other" });
      expect(await sandbox.stat({ path: "absent" })).toBeNull();
    });

    it("lists a directory with hidden entries, symlinks and odd names", async () => {
      const dir = join(scratch, "listing");
      mkdirSync(join(dir, "sub"), { recursive: true });
      writeFileSync(join(dir, ".hidden"), "");
      writeFileSync(join(dir, "with space\nand newline"), "");
      symlinkSync("sub", join(dir, "link"));
      const entries = await sandbox.listDirectory({ path: "listing" });
      expect(entries?.sort((a, b) => a.name.localeCompare(b.name))).toEqual(
        [
          { name: ".hidden", type: "file" },
          { name: "link", type: "symlink" },
          { name: "sub", type: "directory" },
          { name: "with space\nand newline", type: "file" },
        ].sort((a, b) => a.name.localeCompare(b.name)),
      );
      expect(await sandbox.listDirectory({ path: "listing/sub" })).toEqual([]);
      expect(await sandbox.listDirectory({ path: "no-such" })).toBeNull();
      await expect(sandbox.listDirectory({ path: "five.txt" })).rejects.toThrow(/five.txt is not a directory/);
    });

    it("deletes files and symlinks (not their targets), refuses directories", async () => {
      writeFileSync(join(scratch, "doomed.txt"), "x");
      expect(await sandbox.deleteFile({ path: "doomed.txt" })).toBe(true);
      expect(existsSync(join(scratch, "doomed.txt"))).toBe(false);
      expect(await sandbox.deleteFile({ path: "doomed.txt" })).toBe(false);
      expect(await sandbox.deleteFile({ path: "five.link" })).toBe(true);
      expect(existsSync(join(scratch, "five.txt"))).toBe(true);
      await expect(sandbox.deleteFile({ path: "deep" })).rejects.toThrow(/deep is a directory/);
      expect(existsSync(join(scratch, "deep"))).toBe(true);
    });

    it("rejects an aborted file operation with the reason", async () => {
      const controller = new AbortController();
      controller.abort(new Error("never mind"));
      await expect(sandbox.readTextFile({ path: "lines.txt", abortSignal: controller.signal })).rejects.toThrow(
        "never mind",
      );
      await expect(
        sandbox.writeTextFile({ path: "x.txt", content: "x", abortSignal: controller.signal }),
      ).rejects.toThrow("never mind");
      expect(existsSync(join(scratch, "x.txt"))).toBe(false);
    });
  });
});
