/**
 * A command that turns on the fast path's own processes (issue: a hostile
 * command may ruin its own call, never the session): it stops its launcher
 * (the job's parent) or the helper (`$PPID`), or writes into every
 * descriptor the helper has. Real local sessions; each case checks that the
 * call after it runs, fast, with the committed state.
 */

import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { Session } from "../../../../src/core/session.js";
import { normalizeLocalConfig } from "../../../../src/backends/local/config.js";
import { LocalTransport } from "../../../../src/backends/local/transport.js";
import { sessionOptions } from "../../../../src/backends/shared/config.js";
import { LAUNCHER_PID } from "../../../helpers/fast-path-pids.js";
import { noLocalHelper, skipAllUnless, skipUnless } from "../../../helpers/native-helper.js";
import { freeze, noFreezer } from "../../../helpers/freezer.js";

const open: Session[] = [];

async function openSession(warnings: string[]): Promise<{ session: Session; transport: LocalTransport }> {
  const transport = new LocalTransport(normalizeLocalConfig({}));
  const session = await Session.open(transport, sessionOptions({ timeoutMs: 20_000 }, "/tmp"));
  open.push(session);
  const onWarning = (warning: Error): void => void warnings.push(warning.message);
  process.on("warning", onWarning);
  open.push({ close: async () => void process.off("warning", onWarning) } as unknown as Session);
  // The first call that changes the state restarts the launcher: the cases start from a settled one.
  await session.execute("export KEEP=1; cd /tmp");
  await transport.fastPathRunner?.whenReady();
  return { session, transport };
}

afterEach(async () => {
  for (const session of open.splice(0)) await session.close();
});

describe("the fast path under a hostile command", () => {
  skipAllUnless(noLocalHelper);
  it.each([
    ["stops its launcher", "kill -STOP LAUNCHER; echo after"],
    ["stops the helper", "kill -STOP $PPID; echo after"],
    ["suspends itself", "suspend -f; echo after"],
    [
      "sends the helper the signals commands send by habit",
      "kill -TERM $PPID; kill -HUP $PPID; kill -INT $PPID; echo after",
    ],
  ])("%s: the call ends, and the next one runs fast with the state", async (_name, command) => {
    const warnings: string[] = [];
    const { session, transport } = await openSession(warnings);
    const helper = Number((await session.execute("echo $PPID")).output);
    const launcher = Number((await session.execute(LAUNCHER_PID)).output);
    const r = await session.execute(command.replace("LAUNCHER", String(launcher)), { timeoutMs: 15_000 });
    expect(r).toMatchObject({ exitCode: 0, output: "after\n" });
    expect(await session.execute("echo $KEEP; pwd")).toMatchObject({ exitCode: 0, output: "1\n/tmp\n" });
    // Still the same helper: it was continued, not replaced.
    expect(Number((await session.execute("echo $PPID")).output)).toBe(helper);
    expect(transport.fastPathRunner?.running).toBe(true);
    expect(warnings.filter((w) => w.includes("fast path"))).toEqual([]);
  });

  it("a command that stops its own shell ($$) ends at its timeout; the next call runs fast with the state", async () => {
    const warnings: string[] = [];
    const { session, transport } = await openSession(warnings);
    // `$$` takes the plain path, where it is the call's shell, stopped as in a terminal.
    const r = await session.execute("kill -STOP $$; echo after", { timeoutMs: 1500 });
    expect(r).toMatchObject({ exitCode: 124, timedOut: true });
    expect(r.output).not.toMatch(/^after$/m);
    expect(await session.execute("echo $KEEP; pwd")).toMatchObject({ exitCode: 0, output: "1\n/tmp\n" });
    expect(transport.fastPathRunner?.running).toBe(true);
  });

  it("a command that writes into every descriptor of the helper ruins at most its own call", async () => {
    const warnings: string[] = [];
    const { session } = await openSession(warnings);
    const r = await session.execute("for f in /proc/$PPID/fd/*; do printf Z > $f; done 2>/dev/null; echo done", {
      timeoutMs: 15_000,
    });
    expect(r.timedOut).toBe(false);
    const next = await session.execute("echo $KEEP; pwd");
    expect(next).toMatchObject({ exitCode: 0, output: "1\n/tmp\n" });
  });

  it("a launcher that is only slow (frozen, as in a paused container) is not taken for stuck", async (context) => {
    skipUnless(context, noFreezer);
    const warnings: string[] = [];
    const { session } = await openSession(warnings);
    const launcher = Number((await session.execute(LAUNCHER_PID)).output);
    // Frozen past the 2 s a traced launcher gets: in the kernel, not stopped, so it must be waited for.
    const frozen = freeze(launcher);
    let call: Promise<Awaited<ReturnType<Session["execute"]>>>;
    try {
      call = session.execute("echo ran; export SLOW=1", { timeoutMs: 20_000 });
      await new Promise((resolve) => setTimeout(resolve, 3500));
    } finally {
      frozen.thaw();
    }
    expect(await call).toMatchObject({ exitCode: 0, output: "ran\n" });
    expect(await session.execute("echo $KEEP$SLOW")).toMatchObject({ exitCode: 0, output: "11\n" });
  });

  it("a launcher held in a tracer's stop is replaced: its call ends, and the next one runs fast with the state", async () => {
    const warnings: string[] = [];
    const { session, transport } = await openSession(warnings);
    const launcher = Number((await session.execute(LAUNCHER_PID)).output);
    // A tracer that attaches and never lets go: SIGCONT does not free a process in a tracer's stop.
    const tracer = spawn(
      "python3",
      [
        "-c",
        "import ctypes,sys,time; ctypes.CDLL(None).ptrace(16, int(sys.argv[1]), 0, 0); print('on', flush=True); time.sleep(60)",
        String(launcher),
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      await new Promise((resolve) => tracer.stdout.once("data", resolve));
      const r = await session.execute("echo ran", { timeoutMs: 20_000 });
      // It never ran (the launcher never read it), but a dead ready launcher may have forked it: never run twice.
      expect(r).toMatchObject({ exitCode: 125, timedOut: false });
      expect(r.output).toContain("it may or may not have run, and it was not run again");
    } finally {
      tracer.kill("SIGKILL");
    }
    expect(await session.execute("echo $KEEP; pwd")).toMatchObject({ exitCode: 0, output: "1\n/tmp\n" });
    expect(Number((await session.execute(LAUNCHER_PID)).output)).not.toBe(launcher);
    expect(transport.fastPathRunner?.running).toBe(true);
  });
});
