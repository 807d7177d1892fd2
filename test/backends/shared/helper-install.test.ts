/**
 * One helper copy per session (issue 31.3): a session that used both the
 * fast path and a PTY has the helper in the backend once, the fast path's
 * own copy (local: the build, run in place, so none); without the fast path
 * the one installer copies it in once, however many PTYs start.
 */

import { describe, expect, it } from "vitest";
import { createEnvironment, type Environment, type EnvironmentConfig } from "../../../src/index.js";
import type { Session } from "../../../src/core/session.js";
import { processRegistry } from "../../../src/tools/process/process-registry.js";
import { sshTestConfig, sshTestEnabled } from "../ssh/ssh-env.js";
import { noStaticHelper, skipAllUnless } from "../../helpers/native-helper.js";

interface Row {
  name: string;
  enabled: boolean;
  config: Exclude<EnvironmentConfig, { backend: "gateway" }>;
  /** Where this session's copies can be: the whole directory belongs to the session (or its own container). */
  copiesIn(session: Environment): string;
  /** Copies the fast path leaves in the backend (local runs the build in place). */
  fastCopies: number;
}

const stateDir = (session: Environment): string => session.paths.snapshot.replace(/\/[^/]*$/, "");

const rows: Row[] = [
  { name: "local", enabled: true, config: { backend: "local" }, copiesIn: stateDir, fastCopies: 0 },
  {
    name: "ssh",
    enabled: sshTestEnabled,
    config: sshTestEnabled ? sshTestConfig() : { backend: "local" },
    copiesIn: stateDir,
    fastCopies: 1,
  },
  {
    name: "docker",
    enabled: process.env.SHELLWRIGHT_TEST_DOCKER === "1",
    // Its own container: every copy under /tmp is this session's.
    config: {
      backend: "docker",
      image: process.env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm",
      network: false,
    },
    copiesIn: () => "/tmp",
    fastCopies: 1,
  },
];

/** The helper files in `dir` inside the backend, by name. */
async function copies(session: Environment, dir: string): Promise<string[]> {
  const found = await session.execute(`find ${dir} -xdev -type f -name '*swmux*' 2>/dev/null | sort; true`, {
    isolated: true,
  });
  return found.output.split("\n").filter(Boolean);
}

/** A PTY that echoes a line back through the helper: it ran. */
async function echoThroughPty(session: Environment): Promise<void> {
  const registry = processRegistry(session);
  const cat = await registry.spawn("cat", { pty: { cols: 80, rows: 24 } });
  registry.markAction(cat);
  await registry.write(cat, "one copy\r");
  expect((await registry.waitFor(cat, "one copy\\r?\\n.*one copy", 60_000)).status).toBe("matched");
  await registry.kill(cat);
}

describe("one helper copy per session", () => {
  skipAllUnless(noStaticHelper);
  for (const row of rows) {
    describe.skipIf(!row.enabled)(row.name, () => {
      it("with the fast path: the PTY runs the fast path's copy, and no other is made", async () => {
        const session = await createEnvironment({ ...row.config, fastPath: true });
        try {
          expect(await (session as Session).whenFastPathReady()).toBe(true);
          await session.execute("true");
          await echoThroughPty(session);
          await echoThroughPty(session);
          const found = await copies(session, row.copiesIn(session));
          expect(found).toHaveLength(row.fastCopies);
          const helper = await session.helperPath!();
          if (row.fastCopies === 1) expect(found).toEqual([helper]);
          else expect(helper.startsWith(stateDir(session))).toBe(false);
        } finally {
          await session.close();
        }
      }, 180_000);

      it("without it: the installer copies it in once for two PTYs", async () => {
        const session = await createEnvironment({ ...row.config, fastPath: false });
        try {
          await echoThroughPty(session);
          await echoThroughPty(session);
          const found = await copies(session, row.copiesIn(session));
          expect(found).toEqual([await session.helperPath!()]);
        } finally {
          await session.close();
        }
      }, 180_000);
    });
  }
});
