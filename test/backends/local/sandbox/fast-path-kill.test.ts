/**
 * Killing a sandboxed fast-path call. The helper runs inside the sandbox's
 * pid namespace and names its jobs by that namespace's PIDs; on the host the
 * same numbers are other processes (low ones: kernel threads, which no signal
 * ends). The kill's sweep and group kills must run where those PIDs mean the
 * job: a sweep on the host froze such a stranger, waited out its grace and
 * its settle for it, reported the call not clean and went on to a second
 * round that did the same, and a job's own group was never reached: an
 * unmarked child of it outlived its call, and a job orphaned by a dead
 * helper lived on until close().
 */

import { randomInt } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { shellQuote } from "../../../../src/core/script.js";
import { Session } from "../../../../src/core/session.js";
import { normalizeLocalConfig } from "../../../../src/backends/local/config.js";
import { LocalTransport } from "../../../../src/backends/local/transport.js";
import { sessionOptions } from "../../../../src/backends/shared/config.js";
import type { ProcessHandle, TreeKill } from "../../../../src/core/transport.js";
import { noLocalHelper, skipUnless } from "../../../helpers/native-helper.js";
import { eventually } from "../../../helpers/processes.js";
import { HAVE_BWRAP, makeWorld, pidsWithMark, sandboxFor, SKIP_REASON } from "./fixture.js";

describe.skipIf(!HAVE_BWRAP)(`a sandboxed fast-path call's kill (${HAVE_BWRAP ? "bwrap" : SKIP_REASON})`, () => {
  const world = makeWorld();
  afterAll(() => world.cleanup());

  it("ends its unmarked, TERM-proof child in one clean round: the sweep finds the job's group by the namespace's PIDs", async (context) => {
    skipUnless(context, noLocalHelper);
    const transport = new LocalTransport({ ...normalizeLocalConfig({ sandbox: sandboxFor(world) }), cwd: world.work });
    const session = await Session.open(transport, sessionOptions({ timeoutMs: 60_000, killGraceMs: 500 }, world.work));
    const rounds: { signal: string; clean: boolean | void }[] = [];
    const killTree = transport.killTree.bind(transport);
    transport.killTree = async (handle: ProcessHandle, kill: TreeKill) => {
      const clean = await killTree(handle, kill);
      rounds.push({ signal: kill.signal, clean });
      return clean;
    };
    try {
      await transport.fastPathRunner?.whenReady();
      // A number no other process sleeps for: the host's /proc finds the children by it.
      const seconds = String(4_000_000 + randomInt(1_000_000));
      const started = (name: string): string => `${world.work}/${name}`;
      const child = (name: string, prologue = ""): string =>
        shellQuote(`${prologue}echo $$ > ${started(name)}; exec sleep ${seconds}`);
      const controller = new AbortController();
      let before: number[] = [];
      const result = await session.execute(
        [
          "cat /proc/$PPID/comm",
          // Only the call's mark finds this one (its own session, no parent in the call).
          `( setsid nohup bash -c ${child("detached")} >/dev/null 2>&1 & )`,
          // Only the job's process group finds this one (no mark), and TERM does not end it: only the sweep's KILL.
          `( env -i bash -c ${child("unmarked", "trap '' TERM; ")} & )`,
          `until [[ -s ${started("detached")} && -s ${started("unmarked")} ]]; do sleep 0.02; done`,
          "echo ready; wait; sleep 999",
        ].join("\n"),
        {
          signal: controller.signal,
          onOutput: (text) => {
            if (!text.includes("ready")) return;
            before = pidsWithMark(seconds);
            controller.abort();
          },
        },
      );
      expect(result.output).toMatch(/^swmux/);
      expect(result.interrupted).toBe(true);
      expect(before).toHaveLength(2);
      // The first round, TERM escalating to KILL after the grace, saw everything gone: no second round.
      expect(rounds).toEqual([{ signal: "TERM", clean: true }]);
      expect(pidsWithMark(seconds)).toEqual([]);
    } finally {
      await session.close();
    }
  });

  it("ends a job's group when the helper dies under it: the group is killed in there", async (context) => {
    skipUnless(context, noLocalHelper);
    const transport = new LocalTransport({ ...normalizeLocalConfig({ sandbox: sandboxFor(world) }), cwd: world.work });
    const session = await Session.open(transport, sessionOptions({ timeoutMs: 60_000 }, world.work));
    try {
      await transport.fastPathRunner?.whenReady();
      const seconds = String(4_000_000 + randomInt(1_000_000));
      let parent = "";
      const call = session.execute(`cat /proc/$PPID/comm; sleep ${seconds}`, {
        onOutput: (text) => (parent += text),
      });
      await eventually(() => pidsWithMark(seconds).length === 1, "the call's sleep");
      expect(parent).toMatch(/^swmux/);
      transport.fastPathRunner!.killHelper();
      await call;
      await eventually(() => pidsWithMark(seconds).length === 0, "the orphaned job's sleep to be killed");
    } finally {
      await session.close();
    }
  });
});
