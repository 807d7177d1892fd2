/**
 * A process's stdout and stderr apart through the session's helper (split-stream.ts): on local and docker the
 * bytes of both streams come as the helper's frames, with no process started in the backend per chunk; when the
 * helper dies mid-stream, one follower per stream goes on from the byte its channel stopped at, nothing twice.
 */

import { afterEach, describe, expect, it } from "vitest";
import { processRegistry } from "../../../src/tools/process/process-registry.js";
import { noStaticHelper, skipAllUnless } from "../../helpers/native-helper.js";
import { alive, eventually } from "../../helpers/processes.js";
import { TRANSPORT_ENABLED, transportSessions } from "../../helpers/transport-session.js";
import { existsSync, readFileSync } from "node:fs";
import { createEnvironment, spawn, type Gateway } from "../../../src/index.js";
import { scratchDir, startTestGateway, TOKEN } from "../../gateway/helpers.js";

const openSession = transportSessions();
const backends = (["local", "docker"] as const).map((name) => ({ name, enabled: TRANSPORT_ENABLED[name] }));

/** Echoes each line it reads to both streams, with a NUL and a byte that is not UTF-8 on stderr. */
const ECHO_BOTH = `while IFS= read -r l; do printf 'out %s\\n' "$l"; printf 'err %s\\0\\377\\n' "$l" >&2; done`;

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`stdout and stderr apart through the helper: ${backend.name}`, () => {
    skipAllUnless(noStaticHelper);

    async function start() {
      const { session, transport } = await openSession(backend.name);
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

describe("stdout and stderr apart through a gateway at its bound of long-lived executions", () => {
  let gateway: Gateway | undefined;
  const scratch = scratchDir();
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it("a start whose second follower is refused fails naming the bound; the process and the first follower end", async () => {
    gateway = await startTestGateway({ cwd: scratch.path, maxLongLivedPerSession: 1 });
    const env = await createEnvironment({ backend: "gateway", url: gateway.url, token: TOKEN });
    try {
      const pidFile = `${scratch.path}/apart.pid`;
      const started = spawn(env, `echo $BASHPID > ${pidFile}; exec sleep 300`, {
        separateStreams: true,
        onStdout: () => undefined,
        onStderr: () => undefined,
      });
      await expect(started).rejects.toThrow(/maxLongLivedPerSession/);
      // It may have started before its second follower was refused; it was ended then, and its first follower too.
      if (existsSync(pidFile)) {
        const pid = Number(readFileSync(pidFile, "utf8"));
        await eventually(() => !alive(pid), `the refused process (pid ${pid}) to end`);
      }
      await eventually(() => gateway!.registry.longLivedExecutions === 0, "the first follower to end");
      expect(processRegistry(env).all()).toEqual([]);
    } finally {
      await env.close();
    }
  });
});
