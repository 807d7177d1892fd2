/**
 * A background process's stdin written through the session's helper (process-stdin.ts over an attached channel),
 * on the local backend with the real helper: a write the channel took part of is never sent again by the
 * `execute` route (keystrokes typed twice), and a write the process does not read ends at its deadline.
 */

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Session } from "../../../src/core/session.js";
import { normalizeLocalConfig } from "../../../src/backends/local/config.js";
import { LocalTransport } from "../../../src/backends/local/transport.js";
import { sessionOptions } from "../../../src/backends/shared/config.js";
import { callTool } from "../../../src/tools/registry.js";
import { processRegistry } from "../../../src/tools/process/process-registry.js";
import { closeStdin, writeStdin } from "../../../src/tools/process/process-stdin.js";
import { noLocalHelper, skipAllUnless } from "../../helpers/native-helper.js";
import { eventually } from "../../helpers/processes.js";

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** A pipe's capacity on Linux: a write past it waits for the reader. */
const PIPE_BYTES = 65536;

async function openSession(): Promise<{ session: Session; transport: LocalTransport; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "sw-stdin-"));
  const transport = new LocalTransport(normalizeLocalConfig({}));
  const session = await Session.open(transport, sessionOptions({ timeoutMs: 30_000 }, "/tmp"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanup.push(() => session.close());
  expect(await session.whenFastPathReady()).toBe(true);
  return { session, transport, dir };
}

/** A background process that reads nothing until `gate` exists, then copies its stdin to `got`. */
async function gatedCat(session: Session, dir: string) {
  const command = `while [[ ! -e ${dir}/gate ]]; do sleep 0.05; done; exec cat > ${dir}/got`;
  const started = await callTool("terminal", { command, background: true }, { session });
  const process = processRegistry(session).get(started.session_id as string)!;
  expect(process).toBeDefined();
  return process;
}

describe("a process's stdin through the session's helper", () => {
  skipAllUnless(noLocalHelper);

  it("a write the channel took part of before it was lost is not sent again", async () => {
    const { session, transport, dir } = await openSession();
    const process = await gatedCat(session, dir);
    const channel = session.attachProcess!({ pid: process.pid, dir: process.files.dir, onOutput: () => undefined })!;
    // The pipe all but two pages full (the first write may take the execute route: its stdin opens a moment after the start).
    const prefill = PIPE_BYTES - 8192;
    expect(await writeStdin(session, process, "a".repeat(prefill), channel)).toBe(true);
    // Part of this goes in, the rest waits in the helper, which is then lost.
    const data = "b".repeat(70_000);
    const write = writeStdin(session, process, data, channel);
    // A round trip (an attach the helper refuses) after the input: the helper has written what fits.
    const probe = session.attachProcess!({ pid: globalThis.process.pid, dir, onOutput: () => undefined })!;
    expect(await probe.end).toBe("refused");
    transport.fastPathRunner!.killHelper();
    writeFileSync(join(dir, "gate"), "");
    expect(await write).toBe(false);
    expect(await closeStdin(session, process)).toBe(true);
    await eventually(async () => {
      await processRegistry(session).refresh([process]);
      return process.status !== "running";
    }, "the process's end");
    // What went in once: the prefill and some of the write, never the whole write again.
    const got = statSync(join(dir, "got")).size;
    expect(got).toBeGreaterThan(prefill);
    expect(got).toBeLessThan(prefill + data.length);
  });

  it("a write the process does not read ends at its deadline with a clear error, and the process runs on", async () => {
    const { session, dir } = await openSession();
    const process = await gatedCat(session, dir);
    const channel = session.attachProcess!({ pid: process.pid, dir: process.files.dir, onOutput: () => undefined })!;
    expect(await writeStdin(session, process, "a".repeat(PIPE_BYTES), channel)).toBe(true);
    // The pipe is full and nothing reads it: the helper holds this one.
    await expect(writeStdin(session, process, "held\n", channel, 1000)).rejects.toThrow(
      /timed out after 1000 ms: it is not reading its input .* The process runs on; this input goes in once it reads/,
    );
    await expect(writeStdin(session, process, "next\n", channel, 1000)).rejects.toThrow(/still waits for it to read/);
    await processRegistry(session).refresh([process]);
    expect(process.status).toBe("running");
    // Once it reads, the held input goes in, and the channel takes writes again.
    writeFileSync(join(dir, "gate"), "");
    await eventually(async () => {
      try {
        return await writeStdin(session, process, "after\n", channel);
      } catch {
        return false;
      }
    }, "a write taken again");
    expect(await closeStdin(session, process)).toBe(true);
    await eventually(async () => {
      await processRegistry(session).refresh([process]);
      return process.status !== "running";
    }, "the process's end");
    expect(readFileSync(join(dir, "got"), "utf8")).toBe(`${"a".repeat(PIPE_BYTES)}held\nafter\n`);
  });
});
