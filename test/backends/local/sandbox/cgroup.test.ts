/**
 * A sandboxed session's fast path is in the session cgroup, as an
 * unsandboxed one is: inside the sandbox /sys is read-only, so the shell
 * that joins the cgroup before the helper forks must run on the host, before
 * the sandbox is entered. (Inside, the write fails quietly and the helper
 * stays wherever the spawn left it.)
 */

import { basename } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Session } from "../../../../src/core/session.js";
import { normalizeLocalConfig } from "../../../../src/backends/local/config.js";
import { LocalTransport } from "../../../../src/backends/local/transport.js";
import { SessionCgroup } from "../../../../src/backends/local/session-cgroup.js";
import { sessionOptions } from "../../../../src/backends/shared/config.js";
import { noLocalHelper, skipUnless } from "../../../helpers/native-helper.js";
import { executeOn, HAVE_BWRAP, makeWorld, sandboxFor, SKIP_REASON } from "./fixture.js";

const probe = SessionCgroup.create();
probe?.remove();

describe.skipIf(!HAVE_BWRAP || probe === undefined)(
  `local sandbox and the session cgroup (${HAVE_BWRAP ? "bwrap" : SKIP_REASON})`,
  () => {
    const world = makeWorld();
    afterAll(() => world.cleanup());

    it("puts the fast path's jobs in the session cgroup", async (context) => {
      skipUnless(context, noLocalHelper);
      const transport = new LocalTransport({
        ...normalizeLocalConfig({ sandbox: sandboxFor(world) }),
        cwd: world.work,
      });
      const session = await Session.open(transport, sessionOptions({ timeoutMs: 20_000 }, world.work));
      try {
        await transport.fastPathRunner?.whenReady();
        const cgroup = transport.cgroupPath;
        expect(cgroup).toBeDefined();
        // Relative to the host's cgroup namespace: nsenter does not enter the sandbox's.
        const r = await executeOn(session, true, "grep '^0::' /proc/self/cgroup");
        expect(r.output.trim()).toMatch(new RegExp(`/${basename(cgroup!)}$`));
      } finally {
        await session.close();
      }
    });
  },
);
