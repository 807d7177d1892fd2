/**
 * A write and then the close of a background process's stdin that both come before the command has opened it
 * (process-scripts.ts: the wrapper publishes the holder, then starts the command): the command reads the write and
 * then EOF, and ends. The wrapper is held at that point by a FIFO put where it writes `keep` (the line right after
 * the holder and, with separate streams, stderr's sink), so the ordering that lost the write is forced, not hoped
 * for: through the real launch script in bash, and through spawn with the helper's channel and without it.
 */

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { shellQuote } from "../../../src/core/script.js";
import { Session } from "../../../src/core/session.js";
import { normalizeLocalConfig } from "../../../src/backends/local/config.js";
import { LocalTransport } from "../../../src/backends/local/transport.js";
import { sessionOptions } from "../../../src/backends/shared/config.js";
import { spawn } from "../../../src/index.js";
import {
  closeStdinScript,
  launchScript,
  processFiles,
  writeStdinScript,
} from "../../../src/tools/process/process-scripts.js";
import { noLocalHelper } from "../../helpers/native-helper.js";
import { alive, eventually } from "../../helpers/processes.js";

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** Ends a group this test started (a wrapper left hanging without the fix), by its id. */
function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** A scratch directory, removed after the test. */
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "sw-stdin-open-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The holder's pid once the wrapper published it, else 0. */
function holderPid(dir: string): number {
  try {
    return Number(readFileSync(join(dir, "holder"), "utf8")) || 0;
  } catch {
    return 0;
  }
}

/** Prints the pid of the command's shell to `pidFile`, copies its stdin, then says done. */
const catCommand = (pidFile: string) => `echo $BASHPID > ${shellQuote(pidFile)}; cat; echo done`;

/** Reads the gate (lets the wrapper on) and leaves `keep` a plain file holding what it wrote, as it would be. */
const releaseGate = (keep: string) =>
  `__k=$(command cat ${shellQuote(keep)}); command rm -f ${shellQuote(keep)}; builtin printf '%s\\n' "$__k" > ${shellQuote(keep)}`;

describe("the launch script: write and close before the command opened its stdin", () => {
  for (const separateStreams of [false, true]) {
    it(`delivers the write, then EOF (${separateStreams ? "stderr apart" : "merged"})`, () => {
      const dir = join(scratch(), "p");
      mkdirSync(dir, { mode: 0o700 });
      const files = processFiles(dir);
      const pidFile = join(dir, "cmd.pid");
      const launch = launchScript(files, catCommand(pidFile), "proc_gate", { maxLogBytes: 1 << 20, separateStreams });
      const exit = shellQuote(files.exit);
      const script = [
        `command mkfifo ${shellQuote(files.keep)}`,
        `p=$( ${launch} )`,
        'echo "pid=$p"',
        `printf 'x\\n' | { ${writeStdinScript(files)}; }; echo "write=$?"`,
        `holder=$(< ${shellQuote(files.holder)})`,
        `{ ${closeStdinScript(files)}; }; echo "close=$?"`,
        releaseGate(files.keep),
        // Bounded only to end a hang (without the fix the command never starts); it measures nothing.
        `for ((i = 0; i < 300; i++)); do [[ -s ${exit} ]] && break; sleep 0.05; done`,
        `echo "exit=$(< ${exit})"`,
        'echo "holder=$holder"',
      ].join("\n");
      const result = spawnSync("bash", ["-c", script], { encoding: "utf8", timeout: 60_000 });
      const pgid = Number(/pid=(\d+)/.exec(result.stdout)?.[1]);
      cleanup.push(() => killGroup(pgid));
      expect(result.stdout).toMatch(/write=0\nclose=0\nexit=0\nholder=\d+\n$/);
      expect(readFileSync(files.log, "utf8")).toBe("x\ndone\n");
      // Nothing left: the wrapper, the holder and the command's shell are gone.
      const holder = Number(/holder=(\d+)/.exec(result.stdout)?.[1]);
      const command = Number(readFileSync(pidFile, "utf8"));
      return eventually(() => !alive(pgid) && !alive(holder) && !alive(command), "the wrapper, holder and command");
    });
  }
});

describe("spawn: write then close before the command opened its stdin", () => {
  const cases = [
    { name: "fast path, stderr apart (the write through the helper's channel)", fastPath: true, apart: true },
    { name: "fast path, merged", fastPath: true, apart: false },
    { name: "plain, stderr apart", fastPath: false, apart: true },
    { name: "plain, merged", fastPath: false, apart: false },
  ];
  for (const { name, fastPath, apart } of cases) {
    it.skipIf(fastPath && noLocalHelper !== undefined)(`${name}: stdout is exactly the write, then done`, async () => {
      const transport = new LocalTransport(normalizeLocalConfig({ fastPath }));
      const session = await Session.open(transport, sessionOptions({ timeoutMs: 30_000 }, "/tmp"));
      cleanup.push(() => session.close());
      expect(await session.whenFastPathReady()).toBe(fastPath);
      // The gate: a FIFO where the wrapper writes `keep`, made by the launch itself (the directory is its own).
      let dir = "";
      const execute = session.execute.bind(session);
      session.execute = (script, options) => {
        const made = /^\(builtin umask 077 && command mkdir -p ('[^']+')\) \|\| builtin exit 1$/m.exec(script);
        if (made === null || dir !== "") return execute(script, options);
        dir = made[1]!.slice(1, -1);
        return execute(script.replace(made[0], `${made[0]}\ncommand mkfifo ${made[1]}/keep`), options);
      };
      const pidFile = join(scratch(), "cmd.pid");
      const stdout: Buffer[] = [];
      const merged: string[] = [];
      const handle = await spawn(
        session,
        catCommand(pidFile),
        apart
          ? { separateStreams: true, onStdout: (bytes) => stdout.push(Buffer.from(bytes)), onStderr: () => undefined }
          : { onOutput: (text) => merged.push(text) },
      );
      cleanup.push(() => killGroup(handle.pid));
      expect(dir).not.toBe("");
      // The wrapper is at the gate once the holder is published: the write and the close come before the command.
      await eventually(() => holderPid(dir) > 0, "the holder published");
      const holder = holderPid(dir);
      await handle.write("x\n");
      await handle.closeStdin();
      await session.execute(releaseGate(join(dir, "keep")));
      // Bounded only to end a hang (without the fix the command never starts); it measures nothing.
      expect((await handle.wait({ timeoutMs: 30_000 }))?.exitCode).toBe(0);
      const output = () => (apart ? Buffer.concat(stdout).toString("utf8") : merged.join(""));
      await eventually(() => output() === "x\ndone\n", "the output");
      expect(output()).toBe("x\ndone\n");
      const command = Number(readFileSync(pidFile, "utf8"));
      await eventually(
        () => !alive(handle.pid) && !alive(holder) && !alive(command),
        "the wrapper, holder and command",
      );
    });
  }
});
