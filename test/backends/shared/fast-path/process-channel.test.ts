/**
 * Node's end of an attached process (process-channel.ts) over a real helper:
 * writes and their results, the output in order, one end per channel, a
 * refusal, and a helper that dies under an open channel.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { helperCommand, spawnHelper } from "../../../../src/backends/local/fast-path.js";
import { localHelperPath } from "../../../../src/backends/shared/fast-path/helper-path.js";
import { HelperClient } from "../../../../src/backends/shared/fast-path/helper-client.js";
import { launchScript, processFiles } from "../../../../src/tools/process/process-scripts.js";
import { alive, eventually } from "../../../helpers/processes.js";
import { noLocalHelper, skipAllUnless } from "../../../helpers/native-helper.js";

const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const step of cleanup.splice(0).reverse()) step();
});

async function readyClient(
  timing: ConstructorParameters<typeof HelperClient>[3] = {},
): Promise<{ client: HelperClient; dir: string; pid: () => number }> {
  const dir = mkdtempSync(join(tmpdir(), "sw-channel-"));
  const snapshot = join(dir, "snapshot.sh");
  writeFileSync(snapshot, "");
  let pid = 0;
  const command = helperCommand({
    helper: localHelperPath()!,
    bash: "/bin/bash",
    snapshot,
    workDir: dir,
    sessionMark: "channel-test",
  });
  const stream = spawnHelper(command, (found) => (pid = found));
  cleanup.push(() => {
    stream.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  // Nobody continues a stopped helper here: only the watchdog's limit ends what waits on it.
  const client = new HelperClient(
    { ...stream, resume: () => undefined },
    () => undefined,
    () => undefined,
    timing,
  );
  expect(await client.firstReady).toBe(true);
  return { client, dir, pid: () => pid };
}

/** A background process started by a call of the helper, as the process tool starts one. */
async function launch(client: HelperClient, dir: string, command: string): Promise<{ pid: number; dir: string }> {
  const procDir = join(dir, `proc-${Math.random().toString(36).slice(2)}`);
  const call = client.run(
    launchScript(processFiles(procDir), command, "proc_test", { maxLogBytes: 1 << 20 }),
    undefined,
  );
  let text = "";
  for await (const chunk of call.output) text += Buffer.from(chunk).toString();
  await call.end;
  const pid = Number(/(\d+)\s*$/.exec(text)?.[1]);
  cleanup.push(() => {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // gone
    }
  });
  return { pid, dir: procDir };
}

/** Writes until the process's stdin is open (a write right after the start may find it not yet open). */
async function writeWhenOpen(channel: NonNullable<ReturnType<HelperClient["attach"]>>, data: string): Promise<string> {
  let result = await channel.write(Buffer.from(data));
  while (result === "notReady") {
    await new Promise((resolve) => setTimeout(resolve, 20));
    result = await channel.write(Buffer.from(data));
  }
  return result;
}

describe("an attached process's channel", () => {
  skipAllUnless(noLocalHelper);

  it("a write the helper never acks (it was stopped) ends when the helper is given up: closed, and the channel lost", async () => {
    const { client, dir, pid } = await readyClient({ pingAfterMs: 300, resumeAfterMs: 450, giveUpAfterMs: 1000 });
    const proc = await launch(client, dir, "cat");
    const channel = client.attach({ ...proc, onOutput: () => undefined })!;
    expect(await writeWhenOpen(channel, "one\n")).toBe("written");
    // Idle with no call and no write: the watchdog of the launch's call stops (it ticks every 150 ms here).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    process.kill(pid(), "SIGSTOP");
    cleanup.push(() => {
      try {
        process.kill(pid(), "SIGCONT");
      } catch {
        // gone
      }
    });
    expect(await channel.write(Buffer.from("two\n"))).toBe("closed");
    expect(await channel.end).toBe("lost");
    expect(client.alive).toBe(false);
  });

  it("writes, one write at a time, streams the output in order, and ends once when the process does", async () => {
    const { client, dir } = await readyClient();
    const proc = await launch(
      client,
      dir,
      'while read -r line; do echo "got $line"; [[ $line == bye ]] && exit 0; done',
    );
    let output = "";
    const channel = client.attach({ ...proc, onOutput: (bytes) => (output += Buffer.from(bytes).toString()) })!;
    expect(await writeWhenOpen(channel, "one\n")).toBe("written");
    const second = channel.write(Buffer.from("two\n"));
    await expect(channel.write(Buffer.from("three\n"))).rejects.toThrow(/one at a time/);
    expect(await second).toBe("written");
    // A write longer than one request goes in pieces, each acked before the next.
    expect(await channel.write(Buffer.from(`${"x".repeat(70_000)}\nbye\n`))).toBe("written");
    expect(await channel.end).toBe("ended");
    expect(output).toBe(`got one\ngot two\ngot ${"x".repeat(70_000)}\ngot bye\n`);
    expect(channel.offset).toBe(Buffer.byteLength(output));
    expect(await channel.write(Buffer.from("late\n"))).toBe("notReady");
    expect(client.openCalls).toBe(0);
  });

  it("a write racing the channel's end settles closed, and the helper and a call running meanwhile go on", async () => {
    const { client, dir } = await readyClient();
    const proc = await launch(client, dir, "cat");
    const exiting = await launch(client, dir, "read -r _; exit 0");
    // A foreground call that runs across the races and ends by itself (a file it waits for).
    const gate = join(dir, "gate");
    const call = client.run(`while [[ ! -e ${gate} ]]; do sleep 0.05; done; echo done`, undefined);
    const channel = client.attach({ ...proc, onOutput: () => undefined })!;
    expect(await writeWhenOpen(channel, "one\n")).toBe("written");
    // The detach (the stream stopped) and a keystroke right behind it: the helper sees the input after it sent `x`.
    channel.detach();
    expect(await channel.write(Buffer.from("two\n"))).toBe("closed");
    expect(await channel.end).toBe("detached");
    // A round trip (an attach the helper refuses): its answer comes after anything it sent for that input.
    expect(await client.attach({ pid: process.pid, dir, onOutput: () => undefined })!.end).toBe("refused");
    expect(client.alive).toBe(true);
    // A process whose stdin reader exits while keystrokes are in flight: writes until one finds it closed.
    const second = client.attach({ ...exiting, onOutput: () => undefined })!;
    expect(await writeWhenOpen(second, "exit\n")).toBe("written");
    while ((await second.write(Buffer.from("x"))) === "written");
    expect(await second.end).toBe("ended");
    // Any frame the helper sent after those ends comes before the call's end.
    writeFileSync(gate, "");
    const end = await call.end;
    expect(end.killed).toBe(false);
    expect(end.status).toBe(0);
    expect(client.alive).toBe(true);
  });

  it("ends refused for a process the helper did not start (a write sent meanwhile not ready), and lost when the helper dies", async () => {
    const { client, dir } = await readyClient();
    const refused = client.attach({ pid: process.pid, dir, onOutput: () => undefined })!;
    // A write sent before the refusal came: none of it went in, so it is the `execute` route's to take.
    const written = refused.write(Buffer.from("x"));
    expect(await refused.end).toBe("refused");
    expect(await written).toBe("notReady");
    const proc = await launch(client, dir, "sleep 1000");
    const channel = client.attach({ ...proc, onOutput: () => undefined })!;
    client.kill();
    expect(await channel.end).toBe("lost");
    expect(await channel.write(Buffer.from("x"))).toBe("notReady");
    // The process is the session's to end (its sweep), not the channel's: it still runs.
    expect(alive(proc.pid)).toBe(true);
    await eventually(() => !client.alive, "the client gone");
  });
});
