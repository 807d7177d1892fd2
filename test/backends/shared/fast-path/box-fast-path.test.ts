/**
 * The fast path in a box reached through execs (docs/fast-path.md,
 * "Apptainer, Modal and Daytona"): Apptainer through its stand-in
 * executable, Modal and Daytona through FAKE clients at the SDK boundary; all
 * run on this machine. The compat suite runs the whole contract with the fast
 * path on and off (`…-plain`); these are its own failure modes.
 */

import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidOptionError } from "../../../../src/core/errors.js";
import { Session } from "../../../../src/core/session.js";
import { normalizeApptainerConfig } from "../../../../src/backends/apptainer/config.js";
import { ApptainerTransport } from "../../../../src/backends/apptainer/transport.js";
import { normalizeDaytonaConfig } from "../../../../src/backends/daytona/config.js";
import { DaytonaTransport } from "../../../../src/backends/daytona/transport.js";
import { normalizeModalConfig } from "../../../../src/backends/modal/config.js";
import { ModalTransport } from "../../../../src/backends/modal/transport.js";
import { sessionOptions } from "../../../../src/backends/shared/config.js";
import { FakeDaytona } from "../../../fakes/fake-daytona.js";
import { FakeModalClient } from "../../../fakes/fake-modal.js";
import {
  HELPER_PID,
  expectHelperDeathKeepsState,
  expectOneLauncherKeepingState,
} from "../../../helpers/fast-path-pids.js";
import { noStaticHelper, skipAllUnless } from "../../../helpers/native-helper.js";
import { alive, eventually } from "../../../helpers/processes.js";

const standIn = fileURLToPath(new URL("../../../fixtures/apptainer-standin/apptainer", import.meta.url));
const open: Session[] = [];

type BoxTransport = ApptainerTransport | ModalTransport | DaytonaTransport;

const boxes = [
  {
    name: "apptainer (stand-in)",
    transport: (extra: Record<string, unknown> = {}): BoxTransport =>
      new ApptainerTransport(
        normalizeApptainerConfig({
          image: "docker://debian:bookworm-slim",
          executable: standIn,
          scratchDir: join(tmpdir(), "shellwright-test-box-fast-path"),
          ...extra,
        }),
      ),
  },
  {
    name: "modal (fake SDK client)",
    transport: (extra: Record<string, unknown> = {}): BoxTransport =>
      new ModalTransport(normalizeModalConfig({ client: new FakeModalClient(), ...extra }, () => undefined)),
  },
  {
    name: "daytona (fake SDK client, text mode)",
    transport: (extra: Record<string, unknown> = {}): BoxTransport =>
      new DaytonaTransport(normalizeDaytonaConfig({ client: new FakeDaytona(), ...extra }, () => undefined)),
  },
];

async function openSession(
  make: (extra?: Record<string, unknown>) => BoxTransport,
  extra: Record<string, unknown> = {},
): Promise<{ session: Session; transport: BoxTransport }> {
  const transport = make(extra);
  const session = await Session.open(transport, sessionOptions({ timeoutMs: 30_000 }, "/tmp"));
  open.push(session);
  await transport.fastPathRunner?.whenReady();
  return { session, transport };
}

/** Processes on this machine whose command line has `word` (the boxes run here). */
function processesWith(word: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "latin1").split("\0").includes(word)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

afterEach(async () => {
  for (const session of open.splice(0)) await session.close();
});

describe("fastPath option on apptainer, modal and daytona", () => {
  it("is validated, naming the option and the value", () => {
    expect(() => normalizeApptainerConfig({ image: "x.sif", fastPath: "yes" })).toThrow(InvalidOptionError);
    expect(() => normalizeApptainerConfig({ image: "x.sif", fastPath: "yes" })).toThrow(
      /fastPath must be true or false, got "yes"/,
    );
    expect(() => normalizeModalConfig({ fastPath: 1 }, () => undefined)).toThrow(
      /fastPath must be true or false, got 1/,
    );
  });
});

for (const box of boxes) {
  describe(`fast path on ${box.name}`, () => {
    skipAllUnless(noStaticHelper);
    it("runs calls in one launcher in the box and keeps their state", async () => {
      const { session, transport } = await openSession(box.transport);
      expect(transport.fastPathRunner?.ready).toBe(true);
      await expectOneLauncherKeepingState(session);
    });

    it("false runs every call as its own exec", async () => {
      const { session, transport } = await openSession(box.transport, { fastPath: false });
      expect(transport.fastPath).toBeUndefined();
      expect((await session.execute("echo $$")).output).not.toBe((await session.execute("echo $$")).output);
    });

    it("survives its helper being killed in the box: the next calls work, the state is kept", async () => {
      const { session, transport } = await openSession(box.transport);
      await expectHelperDeathKeepsState(
        session,
        () => transport.fastPathRunner!,
        (helper) => process.kill(Number(helper), "SIGKILL"),
      );
    });

    it("kills a timed-out call's whole tree, detached too, and commits nothing of it", async () => {
      const { session } = await openSession(box.transport);
      const word = `4${process.pid}${Math.floor(Math.random() * 1000)}`;
      const r = await session.execute(`export LOST=1; cd /; setsid sleep ${word} & trap '' TERM; sleep 30`, {
        timeoutMs: 700,
      });
      expect(r).toMatchObject({ exitCode: 124, timedOut: true, cwd: "/tmp" });
      await eventually(() => processesWith(word).length === 0);
      expect((await session.execute("echo [${LOST-none}]; pwd")).output).toBe("[none]\n/tmp\n");
    });

    it("never shows a chatty background job's output in a later call, nor waits for it", async () => {
      const { session } = await openSession(box.transport);
      const first = await session.execute("while :; do echo x; done & echo started");
      expect(first.output.split("\n")).toContain("started");
      for (let i = 0; i < 5; i++)
        expect(await session.execute(`echo own-${i}`)).toMatchObject({ output: `own-${i}\n` });
    });

    it("ends the helper and every job at close, an unmarked one too", async () => {
      const { session } = await openSession(box.transport);
      const helper = Number((await session.execute(HELPER_PID)).output.trim());
      const word = `5${process.pid}${Math.floor(Math.random() * 1000)}`;
      await session.execute(`setsid sleep ${word} &`);
      // No mark (env -i) and no new group: only the finished job's group finds it.
      const unmarked = `6${process.pid}${Math.floor(Math.random() * 1000)}`;
      await session.execute(`env -i sleep ${unmarked} &`);
      // The call answers once its job exits, which can be before a background child has exec'd its sleep.
      await eventually(() => processesWith(word).length === 1 && processesWith(unmarked).length === 1);
      open.splice(open.indexOf(session), 1);
      await session.close();
      await eventually(() => processesWith(word).length === 0 && processesWith(unmarked).length === 0);
      await eventually(() => !alive(helper), "the helper to be gone");
    });
  });
}

/** A session on `transport` whose helper runs and has served one call: what a call costs is counted from here. */
async function warmSession(transport: ModalTransport | DaytonaTransport): Promise<Session> {
  const session = await Session.open(transport, sessionOptions({ timeoutMs: 30_000 }, "/tmp"));
  open.push(session);
  await transport.fastPathRunner?.whenReady();
  await session.execute("true");
  return session;
}

describe("fast path on modal: SDK calls", () => {
  skipAllUnless(noStaticHelper);
  it("costs no exec per call once the helper runs, and one write on its stdin", async () => {
    const client = new FakeModalClient();
    const session = await warmSession(new ModalTransport(normalizeModalConfig({ client }, () => undefined)));
    const sandbox = client.last;
    const execs = sandbox.execs.length;
    const writes = sandbox.stdinWrites;
    for (let i = 0; i < 10; i++) expect((await session.execute(`echo ${i}`)).output).toBe(`${i}\n`);
    expect(sandbox.execs.length).toBe(execs);
    expect(sandbox.stdinWrites - writes).toBe(10);
  });
});

describe("fast path on daytona: SDK calls", () => {
  skipAllUnless(noStaticHelper);
  it("costs no session command per call once the helper runs, and one input write", async () => {
    const client = new FakeDaytona();
    const session = await warmSession(new DaytonaTransport(normalizeDaytonaConfig({ client }, () => undefined)));
    const process = client.last.process;
    const commands = process.sessionCommands.length;
    const inputs = process.inputs.length;
    // The frames travel as base64 text: multi-byte characters arrive whole.
    expect((await session.execute("printf 'caf\\303\\251 \\342\\202\\254'")).output).toBe("café €");
    for (let i = 0; i < 10; i++) expect((await session.execute(`echo ${i}`)).output).toBe(`${i}\n`);
    expect(process.sessionCommands.length).toBe(commands);
    expect(process.inputs.length - inputs).toBe(11);
  });
});
