/**
 * The local fast path with real processes: the helper, its launcher and the
 * jobs (docs/fast-path.md). The compat suite runs the whole contract with
 * the fast path on and off; these are the fast path's own failure modes.
 */

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { InvalidOptionError } from "../../../src/core/errors.js";
import { Session } from "../../../src/core/session.js";
import type { FastCallEnd, FastPath } from "../../../src/core/transport.js";
import { normalizeLocalConfig } from "../../../src/backends/local/config.js";
import { LocalTransport } from "../../../src/backends/local/transport.js";
import { sessionOptions } from "../../../src/backends/shared/config.js";
import { alive, eventually, startSpinners } from "../../helpers/processes.js";
import {
  LAUNCHER_PID,
  expectOneLauncherKeepingState,
  expectStoppedCallsCommitNothing,
} from "../../helpers/fast-path-pids.js";
import { noLocalHelper, skipAllUnless } from "../../helpers/native-helper.js";
import { closeAfterEach } from "../../helpers/close-after-each.js";
import { transportSessions } from "../../helpers/transport-session.js";
import { MAX_RUN_BYTES } from "../../../src/backends/shared/fast-path/protocol.js";

const openTransportSession = transportSessions();
const keep = closeAfterEach((session: Session) => session.close());

async function openSession(options: Record<string, unknown> = {}) {
  const opened = await openTransportSession("local", options, 20_000);
  await opened.transport.fastPathRunner?.whenReady();
  return opened;
}

/** The pid of the launcher that forked the call. */
async function launcherPid(session: Session): Promise<number> {
  return Number((await session.execute(LAUNCHER_PID)).output);
}

/** The process's parent's name: a launcher's parent is the helper. */
function parentName(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const parent = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1];
  return readFileSync(`/proc/${parent}/comm`, "utf8").trim();
}

describe("fastPath option", () => {
  it("is validated", () => {
    expect(() => normalizeLocalConfig({ fastPath: "yes" })).toThrow(InvalidOptionError);
    expect(() => normalizeLocalConfig({ fastPath: "yes" })).toThrow(/fastPath must be true or false, got "yes"/);
    expect(normalizeLocalConfig({ fastPath: false }).fastPath).toBe(false);
  });

  it("false runs every call as a fresh bash", async () => {
    const { session, transport } = await openSession({ fastPath: false });
    expect(transport.fastPath).toBeUndefined();
    expect(await launcherPid(session)).not.toBe(await launcherPid(session));
  });

  it("falls back to the plain path when the helper cannot start", async () => {
    const { session, transport } = await openSession({ fastPathHelper: "/nonexistent/swmux" });
    await session.execute("export KEPT=1; cd /");
    // Not `running`: a retry's bash (the one that joins the cgroup, then fails to exec the helper) may be alive for a moment.
    expect(transport.fastPathRunner?.ready).toBe(false);
    expect(await session.execute("echo $KEPT; pwd")).toMatchObject({ exitCode: 0, output: "1\n/\n" });
  });
});

describe("a call whose launcher died as it started", () => {
  /** A local transport whose fast path answers every call with `end` and never runs anything. */
  async function stubbed(end: FastCallEnd): Promise<Session> {
    class Stub extends LocalTransport {
      override get fastPath(): FastPath {
        return {
          prepare: () => undefined,
          tryRun: () => ({
            output: (async function* () {})(),
            wait: async () => end.status,
            kill: () => undefined,
            end: Promise.resolve(end),
          }),
        };
      }
    }
    const session = keep(
      await Session.open(
        new Stub({ ...normalizeLocalConfig({ fastPath: false }) }),
        sessionOptions({ timeoutMs: 20_000 }, "/tmp"),
      ),
    );
    return session;
  }

  it("is never run again when it may have run; one certainly not started runs on the plain path", async () => {
    const file = `/tmp/sw-maybe-${process.pid}-${Date.now()}`;
    const base = { status: 125, committed: false, killed: false, started: false, groupLeft: false, cwd: "" };
    const maybe = await stubbed({ ...base, uncertain: true });
    const r = await maybe.execute(`echo ran >> ${file}`);
    expect(r.exitCode).toBe(125);
    expect(r.output).toContain("may or may not have run");
    expect(() => readFileSync(file, "utf8")).toThrow();
    const notStarted = await stubbed(base);
    expect((await notStarted.execute(`echo ran >> ${file}; cat ${file}; rm -f ${file}`)).output).toBe("ran\n");
  });
});

describe("local fast path", () => {
  skipAllUnless(noLocalHelper);
  it("runs calls in one launcher and keeps the state a call changes", async () => {
    const { session } = await openSession();
    await expectOneLauncherKeepingState(session);
  });

  it("survives its helper being killed: the next calls work, the state is kept", async () => {
    const { session, transport } = await openSession();
    await session.execute("export KEPT=before; cd /");
    transport.fastPathRunner!.killHelper();
    await eventually(() => transport.fastPathRunner!.running === false);
    expect(await session.execute("echo $KEPT; pwd")).toMatchObject({ exitCode: 0, output: "before\n/\n" });
    await eventually(async () => (await transport.fastPathRunner!.whenReady()) === true);
    expect(await session.execute("export KEPT=after; echo $KEPT")).toMatchObject({ output: "after\n" });
    expect((await session.execute("echo $KEPT")).output).toBe("after\n");
  });

  it("survives a command that kills the launcher", async () => {
    const { session } = await openSession();
    await session.execute("export KEPT=yes");
    const pid = await launcherPid(session);
    // On the plain path this would be the call's wrapper: the test would prove nothing there.
    expect(parentName(pid)).toMatch(/^swmux/);
    const r = await session.execute(`kill -9 ${pid}; echo still-here`);
    expect(r).toMatchObject({ exitCode: 0, output: "still-here\n" });
    await eventually(() => !alive(pid));
    expect(await session.execute("echo $KEPT")).toMatchObject({ exitCode: 0, output: "yes\n" });
    expect(await launcherPid(session)).not.toBe(pid);
  });

  it("knows a command that kills its launcher at once was started, also on a busy machine", async () => {
    // The launcher used to report the start after its fork: a job that killed it first was "maybe run".
    const spinners = startSpinners(3);
    try {
      const codes: number[] = [];
      for (let i = 0; i < 8; i++) {
        const { session } = await openSession();
        await session.execute("export KEPT=yes");
        const pid = await launcherPid(session);
        codes.push((await session.execute(`kill -9 ${pid}; echo still-here`)).exitCode);
        await session.close();
      }
      expect(codes.filter((code) => code !== 0)).toEqual([]);
    } finally {
      spinners.stop();
    }
  });

  it("runs a stdin bigger than the helper takes on the plain path, on a busy machine, and keeps the helper (issue 37.6)", async () => {
    // It used to go to the helper, which refuses a request over MAX_RUN_BYTES as a protocol violation and exits:
    // the call then failed with 125 ("the launcher died … may or may not have run") or ran again on the plain path.
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on("warning", onWarning);
    const spinners = startSpinners(2);
    try {
      const { session, transport } = await openSession();
      await session.execute("export KEPT=yes");
      const stdin = Buffer.alloc(MAX_RUN_BYTES + 1024 * 1024, 97);
      const r = await session.execute("wc -c; echo $KEPT", { stdin, timeoutMs: 120_000 });
      expect(r).toMatchObject({ exitCode: 0, output: `${stdin.length}\nyes\n` });
      expect(transport.fastPathRunner?.helperExits).toBe(0);
      expect(warnings.filter((w) => w.includes("fast path"))).toEqual([]);
      // A stdin the helper takes still goes the fast way.
      expect((await session.execute("wc -c; cat /proc/$PPID/comm", { stdin: Buffer.alloc(1024, 97) })).output).toMatch(
        /^1024\nswmux/,
      );
    } finally {
      spinners.stop();
      process.off("warning", onWarning);
    }
  }, 180_000);

  it("ends a command that kills its own shell ($$) as the plain path does, and loses no later call", async () => {
    const { session } = await openSession();
    await session.execute("export KEPT=yes");
    expect(await session.execute("kill $$; echo survived")).toMatchObject({ exitCode: 143, output: "Terminated\n" });
    const killed = await session.execute("kill -9 $$; echo survived");
    expect(killed.exitCode).toBe(137);
    expect(killed.output).not.toContain("survived");
    // Also when the `$$` comes to this shell through eval, out of single quotes.
    const evaluated = await session.execute("eval 'kill $$'; echo survived");
    expect(evaluated).toMatchObject({ exitCode: 143, output: "Terminated\n" });
    expect(await session.execute("echo $KEPT")).toMatchObject({ exitCode: 0, output: "yes\n" });
    // The calls that name `$$` took the plain path; the fast path is still there for the rest.
    expect(parentName(await launcherPid(session))).toMatch(/^swmux/);
  });

  it("reports the status of a command that exec'd, also from a launcher a state change retired", async () => {
    const { session } = await openSession();
    // More calls than one batch of statuses the helper lets the launcher forget.
    for (let i = 0; i < 40; i++) await session.execute(i % 2 === 0 ? "true" : `(exit ${i % 7})`);
    expect((await session.execute("exec bash -c 'exit 7'")).exitCode).toBe(7);
    const before = await launcherPid(session);
    const slow = session.execute("exec bash -c 'sleep 0.5; exit 9'");
    await new Promise((resolve) => setTimeout(resolve, 100));
    await session.execute("export RETIRE=1");
    expect(await launcherPid(session)).not.toBe(before);
    // The retired launcher stays for its job: only it can `wait` for it.
    expect(alive(before)).toBe(true);
    expect((await slow).exitCode).toBe(9);
    await eventually(() => !alive(before));
  });

  it("reports the status of a command that exec'd when its launcher was killed meanwhile", async () => {
    const { session } = await openSession();
    const launcher = await launcherPid(session);
    const slow = session.execute("exec bash -c 'sleep 0.5; exit 9'");
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.kill(launcher, "SIGKILL");
    expect((await slow).exitCode).toBe(9);
  });

  it("leaves no zombie of what a call orphaned, with no call to wake the helper", async () => {
    const { session } = await openSession();
    const orphan = Number((await session.execute("sleep 0.3 >/dev/null 2>&1 & echo $!")).output);
    // The helper adopts it when its job exits, and must reap it when it ends.
    await eventually(() => !existsSync(`/proc/${orphan}`));
  });

  it("keeps the group of a call only when the call left a process in it, and ends that process at close", async () => {
    const { session, transport } = await openSession();
    // A job's group is briefly its own zombie: that is not a process left in it.
    for (let i = 0; i < 30; i++) await session.execute("true");
    expect(transport.endedGroups).toEqual([]);
    const r = await session.execute("echo $BASHPID; sleep 4715 >/dev/null 2>&1 & echo $!");
    const [job, child] = r.output.trim().split("\n").map(Number);
    expect(transport.endedGroups).toEqual([job]);
    expect(alive(child!)).toBe(true);
    await session.close();
    expect(alive(child!)).toBe(false);
  });

  it("answers every call of a long run, pure and exec'd calls mixed", async () => {
    // A job that exits as its start is reported is read from /proc while being reaped (parent 0): such
    // a start was once refused, and its call never answered. It took a few hundred to a few thousand calls.
    const { session } = await openSession();
    for (let i = 0; i < 3000; i++) {
      const r = await session.execute(i % 3 === 0 ? `exec bash -c 'exit ${i % 5}'` : "true", { timeoutMs: 10_000 });
      expect(r.timedOut, `call ${i}`).toBe(false);
      expect(r.exitCode).toBe(i % 3 === 0 ? i % 5 : 0);
    }
  }, 120_000);

  it("takes no job pid from a command that writes to its launcher's report pipe", async () => {
    const { session } = await openSession();
    // A process group of the test's own, which a forged `S id pid` line names for every call id.
    const bystander = spawn("sleep", ["4718"], { detached: true, stdio: "ignore" });
    try {
      const controller = new AbortController();
      const running = session.execute("echo $BASHPID; sleep 4719", {
        signal: controller.signal,
        onOutput: () => setTimeout(() => controller.abort(), 300),
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const launcher = await launcherPid(session);
      await session.execute(`for i in $(seq 1 100); do echo "S $i ${bystander.pid}"; done > /proc/${launcher}/fd/1`);
      const r = await running;
      expect(r.interrupted).toBe(true);
      expect(alive(Number(r.output.split("\n")[0]))).toBe(false);
      expect(alive(bystander.pid!)).toBe(true);
    } finally {
      // Ours, by pid; already gone when the helper signalled it.
      if (alive(bystander.pid!)) process.kill(bystander.pid!, "SIGKILL");
    }
  });

  it("lets no command claim a neighbour's call by writing its start into the launcher's report pipe", async () => {
    const { session } = await openSession();
    const ended: string[] = [];
    // For 3 s the attacker's job names itself as the job of every call id after its own, as fast as it can.
    // A claimed call would be bound to the attacker's job: it would end only when the attacker does, and a
    // kill of it would hit the attacker's group instead of its own job.
    const attack = session
      .execute(
        'j=$BASHPID; read -r _ _ _ l _ < /proc/$j/stat; ( end=$((SECONDS+3)); while ((SECONDS<end)); do for ((i=__swl_id+1; i<__swl_id+60; i++)); do printf "S %s %s\\n" $i $j; done; done > /proc/$l/fd/1 ) 2>/dev/null; echo attacked',
        { timeoutMs: 20_000 },
      )
      .finally(() => ended.push("attacker"));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const victims = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        session.execute(`echo victim-${i}`).finally(() => ended.push(`victim-${i}`)),
      ),
    );
    expect(victims.map((r) => [r.exitCode, r.output])).toEqual(
      Array.from({ length: 20 }, (_, i) => [0, `victim-${i}\n`]),
    );
    expect(await attack).toMatchObject({ exitCode: 0, output: "attacked\n" });
    // Every victim ended on its own, while the attacker still ran.
    expect(ended.at(-1)).toBe("attacker");
  });

  it("survives a command that kills the helper (kill -9 $PPID)", async () => {
    const { session, transport } = await openSession();
    await session.execute("export KEPT=yes; cd /");
    const r = await session.execute("kill -9 $PPID; sleep 1; echo never");
    // Killed with the helper (137), or, when the helper died before it could
    // report the job, failed as "may have run" (125): never run a second time.
    if (r.exitCode === 125) expect(r.output).toContain("may or may not have run");
    else expect(r.exitCode).toBe(137);
    expect(r.output).not.toContain("never");
    expect(await session.execute("echo $KEPT; pwd")).toMatchObject({ exitCode: 0, output: "yes\n/\n" });
    await eventually(async () => (await transport.fastPathRunner!.whenReady()) === true);
    expect(await session.execute("echo $KEPT")).toMatchObject({ exitCode: 0, output: "yes\n" });
  });

  it("never shows a chatty background job's output in a later call, nor waits for it", async () => {
    const { session } = await openSession();
    const first = await session.execute("while :; do echo x; done & echo started");
    // The loop may print before `echo started` does: only the later calls must be clean.
    expect(first.output).toMatch(/^(x\n)*started\n/);
    for (let i = 0; i < 5; i++) expect(await session.execute(`echo own-${i}`)).toMatchObject({ output: `own-${i}\n` });
  });

  it("passes stdin byte for byte, NUL included", async () => {
    const { session } = await openSession();
    const stdin = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256));
    const r = await session.execute("sha256sum | cut -c1-64", { stdin });
    expect(r.output.trim()).toBe(createHash("sha256").update(stdin).digest("hex"));
  });

  it("streams 135 MB of output completely", async () => {
    const { session } = await openSession();
    let bytes = 0;
    const r = await session.execute("head -c 141557760 /dev/zero", { onOutput: (text) => (bytes += text.length) });
    expect(r.exitCode).toBe(0);
    expect(r.truncated).toBe(true);
    expect(bytes).toBe(141557760);
  });

  it("says 124, 130 and 126 like the plain path, and a stopped call commits nothing", async () => {
    const { session } = await openSession();
    await expectStoppedCallsCommitNothing(session, "/tmp", 300);
    expect((await session.execute("true", { cwd: "/nonexistent-fast-path-dir" })).exitCode).toBe(126);
    expect((await session.execute("exec sh -c 'exit 3'")).exitCode).toBe(3);
  });

  it("runs parallel calls, each from the state it started with", async () => {
    const { session } = await openSession();
    await session.execute("export BASE=b");
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => session.execute(`sleep 0.2; echo $BASE-${i}; export P${i}=${i}`)),
    );
    results.forEach((r, i) => expect(r).toMatchObject({ exitCode: 0, output: `b-${i}\n` }));
    const count = Number((await session.execute("env | grep -c '^P[0-9]='")).output);
    expect(count).toBeGreaterThanOrEqual(1);
  });

  it("keeps a heavy state (150 functions, 150 aliases)", async () => {
    const { session } = await openSession();
    const define = Array.from({ length: 150 }, (_, i) => `fn_${i}() { echo "f${i} $1"; }; alias al_${i}='echo a${i}'`);
    await session.execute(define.join("\n"));
    const snapshot = readFileSync(session.paths.snapshot, "utf8");
    expect(snapshot).toContain("fn_149");
    expect((await session.execute("fn_77 x; al_149")).output).toBe("f77 x\na149\n");
    expect((await session.execute("fn_0; al_0")).output).toBe("f0 \na0\n");
  });

  it("keeps a state of 8 MiB, and says so when a state is over the helper's 64 MiB, keeping the one before", async () => {
    const { session } = await openSession();
    // Bigger than the dump FIFO (1 MiB): the helper reads it while the job writes.
    await session.execute("BIG=$(head -c 8388608 /dev/zero | tr '\\0' a)");
    expect((await session.execute("echo ${#BIG}")).output).toBe("8388608\n");
    const over = await session.execute("HUGE=$(head -c 70000000 /dev/zero | tr '\\0' b); echo did");
    expect(over.output).toBe(
      "did\n\n[shellwright: this call's state could not be saved: it is over the fast path's limit of 64 MiB; the session keeps the state it had before this call]",
    );
    expect((await session.execute("echo ${#BIG} ${#HUGE}")).output).toBe("8388608 0\n");
  });

  it("kills what a timed-out call started, however it detached", async () => {
    const { session } = await openSession();
    const r = await session.execute("setsid sleep 300 & echo $!; sleep 30", { timeoutMs: 400 });
    const pid = Number(r.output.split("\n")[0]);
    expect(r.exitCode).toBe(124);
    await eventually(() => !alive(pid));
  });
});

describe("an isolated call", () => {
  skipAllUnless(noLocalHelper);

  it("runs on the fast path from the session's state, and leaves that state as it was", async () => {
    const { session } = await openSession();
    await session.execute("export KEPT=before; cd /tmp; kept() { echo fn; }");
    const launcher = Number((await session.execute(LAUNCHER_PID, { isolated: true })).output);
    expect(parentName(launcher)).toMatch(/^swmux/);
    const r = await session.execute('echo "$KEPT $(kept) $PWD"; export KEPT=after NEW=1; cd /; unset -f kept; exit 3', {
      isolated: true,
    });
    expect(r.output).toBe("before fn /tmp\n");
    expect(r.exitCode).toBe(3);
    expect(r.cwd).toBe("/tmp");
    expect((await session.execute('echo "$KEPT ${NEW-unset} $(kept) $PWD"')).output).toBe("before unset fn /tmp\n");
  });

  it("still ends at its timeout, and nothing of it is kept", async () => {
    const { session } = await openSession();
    const r = await session.execute("export LOST=1; sleep 30", { isolated: true, timeoutMs: 500 });
    expect(r.timedOut).toBe(true);
    expect((await session.execute('echo "${LOST-unset}"')).output).toBe("unset\n");
  });
});
