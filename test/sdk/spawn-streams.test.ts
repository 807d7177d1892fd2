/**
 * spawn's `separateStreams`, `env` and `signal` (src/sdk/spawn.ts) on the local backend with and without the fast
 * path, docker (the helper in the container, and plain), the gateway and e2b (against serve's E2B API): each
 * stream's exact bytes, a signal that reaches the group and what left it with setsid, proven by pid inside the
 * backend.
 */

import { describe, expect, it } from "vitest";
import { callTool, spawn } from "../../src/index.js";
import { compatBackends } from "../compat/backends.js";
import { eventually } from "../helpers/processes.js";
import { useSession } from "../helpers/session.js";

const NAMES = ["local", "local-plain", "docker", "docker-plain", "gateway", "gateway-plain", "e2b", "e2b-plain"];
const backends = compatBackends.filter((backend) => NAMES.includes(backend.name));

/** Interleaved lines on both streams, each with a NUL and a byte that is not UTF-8. */
const ROUNDS = 200;
/** A burst of a few MB on each stream: numbers up and down, so a lost, repeated or reordered piece shows. */
const BURST = 400_000;

function expectedStreams(): { stdout: Buffer; stderr: Buffer } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  for (let i = 1; i <= ROUNDS; i++) {
    out.push(Buffer.from(`o${i}`), Buffer.from([0, 0xff, 0x0a]));
    err.push(Buffer.from(`e${i}`), Buffer.from([0, 0xfe, 0x0a]));
  }
  const up = Array.from({ length: BURST }, (_, i) => `${i + 1}\n`).join("");
  const down = Array.from({ length: BURST }, (_, i) => `${BURST - i}\n`).join("");
  return { stdout: Buffer.concat([...out, Buffer.from(up)]), stderr: Buffer.concat([...err, Buffer.from(down)]) };
}

const STREAMS_COMMAND = [
  `for ((i = 1; i <= ${ROUNDS}; i++)); do printf 'o%d\\0\\377\\n' $i; printf 'e%d\\0\\376\\n' $i >&2; done`,
  `seq 1 ${BURST}`,
  `seq ${BURST} -1 1 >&2`,
  "exit 7",
].join("; ");

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`spawn, streams apart and signals: ${backend.name}`, () => {
    const open = useSession(() => backend.create(), { scratch: true });

    /** The pids among `pids` still running inside the backend (a zombie counts as gone). */
    async function running(pids: readonly string[]): Promise<string[]> {
      const script = `for p in ${pids.join(" ")}; do [ -e /proc/$p ] && ! grep -q ') Z' /proc/$p/stat && echo $p; done; true`;
      return (await open.session.execute(script)).output.split("\n").filter((line) => line !== "");
    }

    it("gives each stream its exact bytes, in order: interleaved lines, NUL and non-UTF-8 bytes, a burst of MBs", async () => {
      const stdout: Buffer[] = [];
      const stderr: Buffer[] = [];
      const proc = await spawn(open.session, STREAMS_COMMAND, {
        separateStreams: true,
        onStdout: (bytes) => stdout.push(Buffer.from(bytes)),
        onStderr: (bytes) => stderr.push(Buffer.from(bytes)),
      });
      const result = await proc.wait();
      await proc.streamsEnded;
      const expected = expectedStreams();
      expect(expected.stdout.length + expected.stderr.length).toBeGreaterThan(5_000_000);
      expect(Buffer.concat(stdout).equals(expected.stdout)).toBe(true);
      expect(Buffer.concat(stderr).equals(expected.stderr)).toBe(true);
      expect(result).toMatchObject({ status: "exited", exitCode: 7, signal: undefined });
      // The model's view (the process tool's poll) is its stdout: the tail of the burst, no stderr.
      const polled = await callTool("process", { action: "poll", session_id: proc.id }, { session: open.session });
      expect(polled.output_preview ?? polled.output ?? "").toMatch(new RegExp(`${BURST - 1}\\n${BURST}\\n?$`));
      expect(polled.stderr_note).toContain(`${proc.id}/err`);
      const logged = await callTool("process", { action: "log", session_id: proc.id }, { session: open.session });
      expect(logged.stderr_note).toContain("stderr");
      expect(result!.output.endsWith(`${BURST}\n`)).toBe(true);
      expect(result!.output).not.toContain("e1\0");
    });

    it("exports env to the process alone, values quoted whatever they hold", async () => {
      const value = `it's "quoted" $HOME \`id\` \\ ;\nline two`;
      const proc = await spawn(open.session, 'printf "%s|%s" "$SW_ONE" "$SW_TWO"', {
        env: { SW_ONE: value, SW_TWO: "" },
      });
      const result = await proc.wait();
      expect(result?.output).toBe(`${value}|`);
      expect((await open.session.execute('printf "%s" "${SW_ONE-unset}"')).output).toBe("unset");
    });

    it("signals the group and a setsid child; a child ignoring SIGTERM goes with SIGKILL", async () => {
      const proc = await spawn(
        open.session,
        [
          `sleep 300 & echo $! > ${open.dir}/plain`,
          `setsid sleep 300 & echo $! > ${open.dir}/detached`,
          // Ignored signals are inherited: the command and its next child ignore SIGTERM.
          "trap '' TERM",
          `bash -c 'while :; do sleep 1; done' & echo $! > ${open.dir}/stubborn`,
          `echo $BASHPID > ${open.dir}/main; echo started; wait`,
        ].join("; "),
      );
      await eventually(async () => (await proc.logs()).includes("started"), "the start");
      const pids = (
        await open.session.execute(`cat ${open.dir}/plain ${open.dir}/detached ${open.dir}/stubborn ${open.dir}/main`)
      ).output
        .trim()
        .split("\n");
      const [plain, detached, stubborn, main] = pids as [string, string, string, string];
      expect(await running(pids)).toEqual(pids);

      await proc.signal("SIGTERM");
      await eventually(async () => (await running([plain, detached])).length === 0, "TERM's targets gone");
      expect(await running([stubborn, main])).toEqual([stubborn, main]);
      expect(proc.status).toBe("running");

      await proc.signal("SIGKILL");
      const result = await proc.wait();
      expect(result).toMatchObject({ status: "killed", exitCode: 137, signal: "SIGKILL" });
      await eventually(async () => (await running([...pids, String(proc.pid)])).length === 0, "all gone");
    });

    it("reports a command ended by SIGTERM as exit code 143, SIGTERM, with its output before it", async () => {
      const proc = await spawn(open.session, "echo ready; exec sleep 300", {
        separateStreams: true,
        onStdout: () => undefined,
      });
      await eventually(async () => (await proc.logs()).includes("ready"), "the start");
      await proc.signal("SIGTERM");
      const result = await proc.wait();
      expect(result).toMatchObject({ status: "exited", exitCode: 143, signal: "SIGTERM", output: "ready\n" });
      await proc.streamsEnded;
    });
  });
}
