/**
 * The helper binary on a pipe, as Node's side of its channel: frames in,
 * frames decoded and checked out, its stderr and exit kept (test/native/).
 */

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { helperCommand } from "../../src/backends/local/fast-path.js";
import { localHelperPath } from "../../src/backends/shared/fast-path/helper-path.js";
import { FrameDecoder, FrameWriter, type Frame } from "../../src/backends/shared/fast-path/frames.js";
import { KEY_BYTES } from "../../src/backends/shared/fast-path/protocol.js";
import { eventually } from "./processes.js";
export { childrenOf } from "./proc-scan.js";

export const helper = localHelperPath();
const started: ChildProcessWithoutNullStreams[] = [];
const dirs: string[] = [];

export interface Harness {
  child: ChildProcessWithoutNullStreams;
  key: Buffer;
  writer: FrameWriter;
  frames: Frame[];
  errors: Error[];
  stderr: () => string;
  exited: Promise<number | null>;
  /** The helper's dir: its snapshot and work dir. */
  dir: string;
}

export function startHelper(flags: string[] = []): Harness {
  const dir = mkdtempSync(join(tmpdir(), "sw-native-"));
  dirs.push(dir);
  const snapshot = join(dir, "snapshot.sh");
  writeFileSync(snapshot, "");
  const { argv, env } = helperCommand({
    helper: helper!,
    bash: "/bin/bash",
    snapshot,
    workDir: dir,
    sessionMark: "native-test",
  });
  const [file, ...rest] = argv;
  // The flags go before the positional arguments, as helperFlags' do.
  const child = spawn(file!, [...flags, ...rest], { env, stdio: ["pipe", "pipe", "pipe"] });
  started.push(child);
  const key = randomBytes(KEY_BYTES);
  const decoder = new FrameDecoder(key);
  const frames: Frame[] = [];
  const errors: Error[] = [];
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on("data", (chunk: Buffer) => {
    try {
      decoder.push(chunk, (frame) => frames.push({ ...frame, payload: Buffer.from(frame.payload) }));
    } catch (error) {
      errors.push(error as Error);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, key, writer: new FrameWriter(key), frames, errors, stderr: () => stderr, exited, dir };
}

/** Ends the helpers the test started (by pid) and removes their dirs: call it in afterEach. */
export function endHelpers(): void {
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Sends the key and waits for the launcher's ready frame. */
export async function startReady(flags: string[] = []): Promise<Harness> {
  const h = startHelper(flags);
  h.child.stdin.write(h.key);
  await eventually(() => h.frames.some((f) => f.type === "H"), "the ready frame");
  return h;
}
