/**
 * A process's stdout and stderr apart through the session's helper (split-stream.ts): on local and docker the
 * bytes of both streams come as the helper's frames, with no process started in the backend per chunk; when the
 * helper dies mid-stream, one follower per stream goes on from the byte its channel stopped at, nothing twice.
 */

import { afterEach, describe, expect, it } from "vitest";
import { Session } from "../../../src/core/session.js";
import { normalizeLocalConfig } from "../../../src/backends/local/config.js";
import { LocalTransport } from "../../../src/backends/local/transport.js";
import { normalizeDockerConfig } from "../../../src/backends/docker/config.js";
import { DockerTransport } from "../../../src/backends/docker/transport.js";
import { sessionOptions } from "../../../src/backends/shared/config.js";
import { processRegistry } from "../../../src/tools/process/process-registry.js";
import { DOCKER_TEST_ENABLED, DOCKER_TEST_IMAGE } from "../../helpers/docker-test.js";
import { noStaticHelper, skipAllUnless } from "../../helpers/native-helper.js";
import { eventually } from "../../helpers/processes.js";

const open: Session[] = [];
afterEach(async () => {
  for (const session of open.splice(0)) await session.close();
});

const backends = [
  {
    name: "local",
    enabled: true,
    transport: () => new LocalTransport(normalizeLocalConfig({})),
    cwd: "/tmp",
  },
  {
    name: "docker",
    enabled: DOCKER_TEST_ENABLED,
    transport: () =>
      new DockerTransport(normalizeDockerConfig({ image: DOCKER_TEST_IMAGE, network: false }, () => undefined)),
    cwd: "/root",
  },
];

/** Echoes each line it reads to both streams, with a NUL and a byte that is not UTF-8 on stderr. */
const ECHO_BOTH = `while IFS= read -r l; do printf 'out %s\\n' "$l"; printf 'err %s\\0\\377\\n' "$l" >&2; done`;

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`stdout and stderr apart through the helper: ${backend.name}`, () => {
    skipAllUnless(noStaticHelper);

    async function start() {
      const transport = backend.transport();
      const session = await Session.open(transport, sessionOptions({ timeoutMs: 30_000 }, backend.cwd));
      open.push(session);
      expect(await session.whenFastPathReady()).toBe(true);
      const stdout: Buffer[] = [];
      const stderr: Buffer[] = [];
      const registry = processRegistry(session);
      const process = await registry.spawn(ECHO_BOTH, {
        separateStreams: true,
        onStdout: (bytes) => stdout.push(Buffer.from(bytes)),
        onStderr: (bytes) => stderr.push(Buffer.from(bytes)),
      });
      const out = () => Buffer.concat(stdout).toString("latin1");
      const err = () => Buffer.concat(stderr).toString("latin1");
      /** Types `word` and waits for it on both streams. */
      const say = async (word: string) => {
        expect(await registry.write(process, `${word}\n`)).toBe(true);
        await eventually(() => out().includes(`out ${word}\n`) && err().includes(`err ${word}\0\xff\n`), word);
      };
      return { session, runner: transport.fastPathRunner!, registry, process, out, err, say };
    }

    it("streams both apart as the helper's frames: no process per chunk, no call slot held", async () => {
      const { runner, registry, process, out, err, say } = await start();
      expect(process.stream?.channel).toBeDefined();
      // The first write may come before the process's stdin is open (it then takes the execute route).
      await say("warm");
      const sent = runner.requestsSent;
      for (const word of ["alpha", "beta", "gamma"]) await say(word);
      expect(runner.requestsSent).toBe(sent);
      expect(runner.openCalls).toBe(0);
      expect(out()).toBe(["warm", "alpha", "beta", "gamma"].map((w) => `out ${w}\n`).join(""));
      expect(err()).toBe(["warm", "alpha", "beta", "gamma"].map((w) => `err ${w}\0\xff\n`).join(""));
      await registry.kill(process);
    });

    it("when the helper dies mid-stream, each stream goes on from where its channel stopped, nothing twice", async () => {
      const { runner, registry, process, out, err, say } = await start();
      await say("before");
      runner.killHelper();
      await eventually(() => !runner.running || runner.helperExits > 0, "the helper gone");
      await say("after");
      expect(out()).toBe("out before\nout after\n");
      expect(err()).toBe("err before\0\xff\nerr after\0\xff\n");
      await registry.kill(process);
    });
  });
}
