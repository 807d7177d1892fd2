/**
 * Programs in the E2B sandbox as the fast path needs them (BoxExec). The
 * long-lived one is a background command with its stdin kept open: each
 * request goes in with one `commands.sendStdin` call and its output comes
 * back on the command's stream. The SDK hands output over as decoded text,
 * so the helper runs in its text mode (base64 lines).
 */

import { Writable } from "node:stream";
import { shellQuote } from "../../core/script.js";
import { withStdinFile } from "../shared/sandbox-command.js";
import { boxOutputs, type BoxExec, type BoxProcess } from "../shared/fast-path/box-helper.js";
import { runToEnd, NO_COMMAND_LIMIT_MS } from "./commands.js";
import type { E2bSandbox } from "./sdk.js";

const SHORT_RUN_TIMEOUT_MS = 60_000;

/** @param upload writes bytes to a new file of the session's private directory; its path */
export function e2bBox(
  sandbox: () => E2bSandbox,
  upload: (box: E2bSandbox, bytes: Uint8Array) => Promise<string>,
): BoxExec {
  return {
    text: true,
    spawn: (argv) => spawnInSandbox(sandbox(), argv),
    run: async (argv, stdin) => {
      const box = sandbox();
      let command = argv.map((arg) => shellQuote(arg)).join(" ");
      // A file, not the command line: the bytes (the helper itself) may be large and binary.
      if (stdin !== undefined) command = withStdinFile(command, await upload(box, stdin));
      return runToEnd(box, command, SHORT_RUN_TIMEOUT_MS);
    },
  };
}

function spawnInSandbox(box: E2bSandbox, argv: string[]): BoxProcess {
  const { stdout, stderr, endWhen } = boxOutputs();
  const started = box.commands.run(argv.map((arg) => shellQuote(arg)).join(" "), {
    background: true,
    stdin: true,
    timeoutMs: NO_COMMAND_LIMIT_MS,
    onStdout: (text) => void stdout.write(text, "latin1"),
    onStderr: (text) => void stderr.write(text, "latin1"),
  });
  // One request at a time, in order: Writable calls write() again only after the last one's callback.
  const stdin = new Writable({
    write(chunk: Buffer, _encoding, done) {
      started
        .then((handle) => box.commands.sendStdin(handle.pid, chunk.toString("latin1")))
        .then(
          () => done(),
          (error: Error) => done(error),
        );
    },
  });
  const closed = endWhen(started.then((handle) => handle.wait().catch(() => undefined)));
  return {
    stdin,
    stdout,
    stderr,
    closed,
    // The end of its stdin makes the helper quit (and take its jobs with it); a kill only if that fails.
    stop: () =>
      void started
        .then((handle) => box.commands.closeStdin(handle.pid).catch(() => box.commands.kill(handle.pid)))
        .catch(() => undefined),
  };
}
