/**
 * Node's watchdog over a real helper (issue 37.6): a big request that takes
 * longer to deliver than the watchdog's limit (a loaded machine) is not
 * silence, since the helper says it is alive while it reads; a helper that
 * stops reading is still given up. The delivery is slowed on our side of the
 * pipe (a fixed pace, so the case does not depend on the machine's load), and
 * the watchdog's limits are shortened.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { helperCommand, spawnHelper } from "../../../../src/backends/local/fast-path.js";
import { localHelperPath } from "../../../../src/backends/shared/fast-path/helper-path.js";
import {
  HelperClient,
  type HelperFailure,
  type HelperStream,
} from "../../../../src/backends/shared/fast-path/helper-client.js";
import { noLocalHelper, skipAllUnless } from "../../../helpers/native-helper.js";

const TIMING = { pingAfterMs: 300, resumeAfterMs: 450, giveUpAfterMs: 1000 };
const cleanup: Array<() => void> = [];

afterEach(() => {
  for (const step of cleanup.splice(0).reverse()) step();
});

/** Writes on to `target` at most `bytes` every `everyMs`: a helper on a machine too busy to read faster. */
function paced(target: Writable, bytes: number, everyMs: number): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      let offset = 0;
      const next = (): void => {
        if (offset >= chunk.length) return done();
        const piece = chunk.subarray(offset, offset + bytes);
        offset += piece.length;
        target.write(piece, () => setTimeout(next, everyMs));
      };
      next();
    },
    final(done) {
      target.end();
      done();
    },
  });
}

function startLocalHelper(): { stream: HelperStream; pid: () => number } {
  const dir = mkdtempSync(join(tmpdir(), "sw-helper-client-"));
  const snapshot = join(dir, "snapshot.sh");
  writeFileSync(snapshot, "");
  let pid = 0;
  const stream = spawnHelper(
    helperCommand({
      helper: localHelperPath()!,
      bash: "/bin/bash",
      snapshot,
      workDir: dir,
      sessionMark: "client-test",
    }),
    (found) => (pid = found),
  );
  cleanup.push(() => {
    stream.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  return { stream, pid: () => pid };
}

async function collect(output: AsyncIterable<Uint8Array>): Promise<string> {
  let text = "";
  for await (const chunk of output) text += Buffer.from(chunk).toString();
  return text;
}

/** A client on `stream` with the short watchdog limits, its failures collected in `failures`, once it is ready. */
async function watchedClient(stream: ConstructorParameters<typeof HelperClient>[0], failures: HelperFailure[]) {
  const client = new HelperClient(
    stream,
    () => undefined,
    (failure) => failures.push(failure),
    TIMING,
  );
  expect(await client.firstReady).toBe(true);
  return client;
}

describe("the helper's watchdog", () => {
  skipAllUnless(noLocalHelper);

  it("does not give up a helper that is still reading a big request delivered slowly", async () => {
    const { stream } = startLocalHelper();
    const failures: HelperFailure[] = [];
    // 3 MiB at 64 KiB per 50 ms: about 2.4 s on the way, more than twice the 1 s limit.
    const slow = { ...stream, input: paced(stream.input, 65_536, 50) };
    const client = await watchedClient(slow, failures);
    const stdin = Buffer.alloc(3 * 1024 * 1024, 97);
    const call = client.run("wc -c", stdin);
    const [output, end] = await Promise.all([collect(call.output), call.end]);
    expect(failures).toEqual([]);
    expect(end).toMatchObject({ status: 0, started: true, killed: false });
    expect(end.uncertain).toBeUndefined();
    expect(output).toBe(`${stdin.length}\n`);
    expect(client.alive).toBe(true);
  });

  it("still gives up a helper that stopped reading in the middle of a request", async () => {
    const { stream, pid } = startLocalHelper();
    const failures: HelperFailure[] = [];
    // Nobody continues it: only the watchdog's silence limit can end the call.
    const stuck = { ...stream, resume: () => undefined };
    const client = await watchedClient(stuck, failures);
    process.kill(pid(), "SIGSTOP");
    cleanup.push(() => {
      try {
        process.kill(pid(), "SIGCONT");
      } catch {
        // gone
      }
    });
    const call = client.run("wc -c", Buffer.alloc(8 * 1024 * 1024, 97));
    const end = await call.end;
    expect(failures.map((f) => f.kind)).toEqual(["stuck"]);
    expect(end.started).toBe(false);
    expect(client.alive).toBe(false);
  });
});
