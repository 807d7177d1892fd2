/**
 * Which processes `signal` (process-signal.ts) reaches, proven by pid with real processes: a process group that is
 * not ours (its id once the wrapper's, reused) is left alone, and a command that lists itself in its `keep` file
 * is still killed by SIGKILL, on the local backend with and without the fast path.
 */

import { spawn as spawnChild, execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, spawn, type Environment } from "../../../src/index.js";
import { processFiles } from "../../../src/tools/process/process-scripts.js";
import { signalScript } from "../../../src/tools/process/process-signal.js";
import { alive, eventually } from "../../helpers/processes.js";
import { useScratchDir } from "../../helpers/scratch.js";

const scratch = useScratchDir("sw-signal-");

describe("signal's script and a group that is not the process's", () => {
  it("leaves alone a group whose leader has the pgid it was given (a reused pid)", async () => {
    // An unrelated group: a detached bash (its own session and group) with two sleeps.
    const other = spawnChild("bash", ["-c", "sleep 300 & echo $!; sleep 300 & echo $!; wait"], {
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
    });
    let text = "";
    other.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
    await eventually(() => text.trim().split("\n").length === 2, "the unrelated group's sleeps");
    const pids = [other.pid!, ...text.trim().split("\n").map(Number)];
    try {
      const request = { index: 0, files: processFiles(scratch.path), pgid: other.pid!, offset: 0, maxBytes: 1024 };
      execFileSync("bash", ["-c", signalScript(request, "proc_deadbeef0000", "SIGKILL")], { stdio: "ignore" });
      expect(pids.map(alive)).toEqual([true, true, true]);
    } finally {
      process.kill(-other.pid!, "SIGKILL");
    }
  });
});

for (const fastPath of [true, false]) {
  describe(`signal and the keep file (local, fast path ${fastPath ? "on" : "off"})`, () => {
    let env: Environment;
    beforeAll(async () => {
      env = await createEnvironment({ backend: "local", fastPath });
    });
    afterAll(async () => {
      await env.close();
    });

    const dodgers = {
      "an exec'd sleep in keep": 'echo "$BASHPID $BASHPID" > "$d/keep"; echo ready; exec sleep 1000',
      // Its stdin redirected from a pipe, as a bounder's is.
      "a bash in keep and holder, reading a pipe": `echo "$BASHPID $BASHPID" > "$d/keep"; echo $BASHPID > "$d/holder"; trap '' TERM; echo ready; exec < <(sleep 1000); while :; do sleep 1; done`,
      // Without its lock file, the wrapper's fd 9 no longer proves the group the process's.
      "a bash that replaced the lock file": `rm -f "$d/lock"; : > "$d/lock"; trap '' TERM; echo ready; while :; do sleep 1; done`,
    };
    for (const [name, dodge] of Object.entries(dodgers))
      it(`kills with SIGKILL a command that tries to dodge it (${name}), keeping its output`, async () => {
        const out = `${scratch.path}/dodger-${fastPath}-${name.length}`;
        const proc = await spawn(env, `d=$(dirname "$(readlink /proc/self/fd/0)"); echo $BASHPID > ${out}; ${dodge}`);
        await eventually(async () => (await proc.logs()).includes("ready"), "the start");
        const pid = Number((await env.execute(`cat ${out}`)).output.trim());
        expect(alive(pid)).toBe(true);
        await proc.signal("SIGKILL");
        const result = await proc.wait({ timeoutMs: 30_000 });
        expect(result).toMatchObject({ status: "killed", exitCode: 137, signal: "SIGKILL", output: "ready\n" });
        await eventually(() => !alive(pid) && !alive(proc.pid), "the command and its wrapper gone");
      });

    it("kills with SIGKILL a process signalled right after its start, however far its wrapper got", async () => {
      for (let round = 0; round < 3; round++) {
        const out = `${scratch.path}/early-${fastPath}-${round}`;
        const proc = await spawn(env, `echo $BASHPID > ${out}; exec sleep 1000`);
        await proc.signal("SIGKILL");
        expect(await proc.wait({ timeoutMs: 30_000 })).toMatchObject({ status: "killed", signal: "SIGKILL" });
        await eventually(() => !alive(proc.pid), "the wrapper gone");
        // The command either never started or is gone (its pid file, if written, names a dead process).
        const started = await env.execute(`cat ${out} 2>/dev/null`);
        if (started.output.trim() !== "")
          await eventually(() => !alive(Number(started.output.trim())), "the command gone");
      }
    });

    it("spares the wrapper's helpers from SIGTERM: stdin stays open and the output after it is kept", async () => {
      // TERM ignored by the command and cat (an ignored signal is inherited): only a helper could be hurt by it.
      const proc = await spawn(env, "trap '' TERM; echo ready; cat; echo after-eof", {
        separateStreams: true,
        onStdout: () => undefined,
      });
      await eventually(async () => (await proc.logs()).includes("ready"), "the start");
      await proc.signal("SIGTERM");
      expect(proc.status).toBe("running");
      await proc.write("typed\n");
      await proc.closeStdin();
      const result = await proc.wait();
      expect(result).toMatchObject({ status: "exited", exitCode: 0, output: "ready\ntyped\nafter-eof\n" });
    });
  });
}
