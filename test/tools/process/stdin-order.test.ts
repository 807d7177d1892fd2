/**
 * Writes and the close of a background process's stdin keep the order they were asked in (inStdinOrder,
 * process-stdin.ts), whichever route each takes: a write not awaited and then the close, right after the start,
 * is read before EOF, on the local backend with the helper's channel and without it, streams apart and merged.
 * Without the order the close (an `execute`) overtook the write (the helper's channel, or an `execute` waiting for
 * the holder) within a few rounds: the write was refused as closed and the process read EOF alone.
 */

import { afterEach, describe, expect, it } from "vitest";
import { Session } from "../../../src/core/session.js";
import { normalizeLocalConfig } from "../../../src/backends/local/config.js";
import { LocalTransport } from "../../../src/backends/local/transport.js";
import { sessionOptions } from "../../../src/backends/shared/config.js";
import { spawn } from "../../../src/index.js";
import { noLocalHelper } from "../../helpers/native-helper.js";
import { alive, eventually } from "../../helpers/processes.js";

const open: Session[] = [];
afterEach(async () => {
  for (const session of open.splice(0)) await session.close();
});

/** Rounds per case: without the order, every case lost a write within its first four. */
const ROUNDS = 20;

const cases = [
  { name: "fast path, streams apart", fastPath: true, apart: true },
  { name: "fast path, merged", fastPath: true, apart: false },
  { name: "plain, streams apart", fastPath: false, apart: true },
  { name: "plain, merged", fastPath: false, apart: false },
];

describe("a write not awaited, then the close", () => {
  for (const { name, fastPath, apart } of cases) {
    it.skipIf(fastPath && noLocalHelper !== undefined)(`${name}: the write is read, then EOF`, async () => {
      const session = await Session.open(
        new LocalTransport(normalizeLocalConfig({ fastPath })),
        sessionOptions({ timeoutMs: 30_000 }, "/tmp"),
      );
      open.push(session);
      expect(await session.whenFastPathReady()).toBe(fastPath);
      for (let round = 1; round <= ROUNDS; round++) {
        const chunks: Buffer[] = [];
        const handle = await spawn(
          session,
          "cat; echo done",
          apart
            ? { separateStreams: true, onStdout: (bytes) => chunks.push(Buffer.from(bytes)) }
            : { onOutput: (text) => chunks.push(Buffer.from(text)) },
        );
        const written = handle.write(`x${round}\n`).then(
          () => "written",
          (error: unknown) => String(error),
        );
        await handle.closeStdin();
        expect(await written, `round ${round}`).toBe("written");
        // Bounded only to end a hang; it measures nothing.
        expect((await handle.wait({ timeoutMs: 30_000 }))?.exitCode, `round ${round}`).toBe(0);
        const output = () => Buffer.concat(chunks).toString("utf8");
        await eventually(() => output() === `x${round}\ndone\n`, `round ${round}'s output`);
        await eventually(() => !alive(handle.pid), `round ${round}'s wrapper (pid ${handle.pid}) gone`);
      }
    });
  }
});
