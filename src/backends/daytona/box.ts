/**
 * Programs in the Daytona sandbox as the fast path needs them (BoxExec). The
 * long-lived one is a session command in a process session of its own: its
 * output arrives on the session's log stream and its input goes in with
 * `sendSessionCommandInput`, one SDK call per request. Both carry text only,
 * so the helper runs in its text mode (base64 lines).
 */

import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { shellQuote } from "../../core/script.js";
import { withStdinFile } from "../shared/sandbox-command.js";
import { boxOutputs, type BoxExec, type BoxProcess } from "../shared/fast-path/box-helper.js";
import type { DaytonaSandbox } from "./sdk.js";

const SHORT_EXEC_TIMEOUT_SEC = 60;

export function daytonaBox(sandbox: () => DaytonaSandbox, tempDir: string): BoxExec {
  return {
    text: true,
    spawn: (argv) => spawnInSession(sandbox(), argv),
    run: async (argv, stdin) => {
      const box = sandbox();
      let command = argv.map((arg) => shellQuote(arg)).join(" ");
      if (stdin !== undefined) {
        // A file, not the command line: the bytes may be large and binary.
        const path = `${tempDir}/shellwright-in-${randomBytes(6).toString("hex")}`;
        await box.fs.uploadFile(Buffer.from(stdin), path);
        command = withStdinFile(command, path);
      }
      const response = await box.process.executeCommand(
        `bash -c ${shellQuote(command)}`,
        undefined,
        undefined,
        SHORT_EXEC_TIMEOUT_SEC,
      );
      return { exitCode: response.exitCode, output: response.result };
    },
  };
}

function spawnInSession(box: DaytonaSandbox, argv: string[]): BoxProcess {
  const { stdout, stderr, endWhen } = boxOutputs();
  const sessionId = `shellwright-fast-${randomBytes(6).toString("hex")}`;
  const started = (async () => {
    await box.process.createSession(sessionId);
    const command = argv.map((arg) => shellQuote(arg)).join(" ");
    const { cmdId } = await box.process.executeSessionCommand(sessionId, { command, runAsync: true });
    return cmdId;
  })();
  // One request at a time, in order: Writable calls write() again only after the last one's callback.
  const stdin = new Writable({
    write(chunk: Buffer, _encoding, done) {
      started
        .then((cmdId) => box.process.sendSessionCommandInput(sessionId, cmdId, chunk.toString("latin1")))
        .then(
          () => done(),
          (error: Error) => done(error),
        );
    },
  });
  const closed = endWhen(
    started.then((cmdId) =>
      box.process.getSessionCommandLogs(
        sessionId,
        cmdId,
        (text) => stdout.write(text, "latin1"),
        (text) => stderr.write(text, "latin1"),
      ),
    ),
  );
  return {
    stdin,
    stdout,
    stderr,
    closed,
    // Deleting its session ends the helper (the SDK has no other kill for a session command).
    stop: () => void box.process.deleteSession(sessionId).catch(() => undefined),
  };
}
