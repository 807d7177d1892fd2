/**
 * A session whose owner is SIGKILLed ends on its own: a real node process
 * (test/fixtures/owner-death.mjs, on the built dist/) opens a session on each
 * backend, starts a background job, and is killed with SIGKILL; the job, the
 * state dir, the watchdog itself, the ssh master and the docker container must
 * be gone within a bounded wait.
 */

import { spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEnvironment } from "../../../src/index.js";
import { killAll, pidsWithCmdline } from "../../helpers/proc-scan.js";
import { alive, eventually } from "../../helpers/processes.js";
import { noLocalHelper, skipUnless } from "../../helpers/native-helper.js";
import { sshTestConfig, sshTestEnabled } from "../ssh/ssh-env.js";
import { startOwnerFixture } from "../../helpers/owner-fixture.js";
import { DOCKER_TEST_IMAGE as image, DOCKER_TEST_ENABLED as dockerEnabled } from "../../helpers/docker-test.js";

const fixture = join(import.meta.dirname, "../../fixtures/owner-death.mjs");
const started = new Set<number>();
afterAll(() => killAll(started));

interface Report {
  owner: number;
  sessions: { backend: string; stateDir: string; pids: number[]; hostname: string }[];
}

/** Starts the fixture and resolves once it has opened every session. */
async function startOwner(configs: object[]): Promise<{ child: ChildProcess; report: Report }> {
  const { child, report } = await startOwnerFixture<Report>(fixture, [JSON.stringify(configs)], started);
  for (const s of report.sessions) if (s.backend !== "docker") s.pids.forEach((pid) => started.add(pid));
  return { child, report };
}

function killOwner(child: ChildProcess): void {
  process.kill(child.pid!, "SIGKILL");
}

describe("owner death", () => {
  it("local: the background job, the state dir and the watchdog go with a SIGKILLed owner", async () => {
    const { child, report } = await startOwner([{ backend: "local" }]);
    const session = report.sessions[0]!;
    const watchdogs = pidsWithCmdline("shellwright-watchdog", session.stateDir);
    expect(watchdogs).toHaveLength(1);
    watchdogs.forEach((pid) => started.add(pid));
    expect(alive(session.pids[0]!)).toBe(true);
    expect(existsSync(session.stateDir)).toBe(true);

    killOwner(child);
    await eventually(() => !alive(session.pids[0]!), "the background job dies");
    await eventually(() => !existsSync(session.stateDir), "the state dir (its snapshot holds env values) is removed");
    await eventually(() => watchdogs.every((pid) => !alive(pid)), "the watchdog exits");
  });

  it("local: a fast-path call still running, and a process left only in its group, go with a SIGKILLed owner", async (context) => {
    skipUnless(context, noLocalHelper);
    // The process has no mark (env -i), no parent in the call (a double fork) and is out of the
    // session cgroup (where there is one): only the job's process group, known to the watchdog, finds it.
    const pidFile = `/tmp/shellwright-owner-running-${process.pid}`;
    rmSync(pidFile, { force: true });
    const command =
      `( ( cg=$(sed -n "s/^0:://p" /proc/self/cgroup); mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts); ` +
      `echo $BASHPID > "$mnt\${cg%/*}/cgroup.procs" 2>/dev/null; ` +
      `echo $BASHPID > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; exec env -i sleep 4713 ) & ); exec sleep 4714`;
    const { child, report } = await startOwner([{ backend: "local", running: { command, pidFile } }]);
    const orphan = report.sessions[0]!.pids[1]!;
    const field = (pid: number, index: number): number =>
      Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[index]);
    // It ran on the fast path: its group's leader is a job of the helper's launcher.
    const launcher = field(field(orphan, 2), 1);
    expect(readFileSync(`/proc/${field(launcher, 1)}/comm`, "utf8")).toMatch(/^swmux/);
    expect(alive(orphan)).toBe(true);
    // A call that has run a while (the watchdog hears of a job's group after 20 ms).
    await new Promise((resolve) => setTimeout(resolve, 200));
    killOwner(child);
    await eventually(() => !alive(orphan), "the process left in the call's group dies");
    rmSync(pidFile, { force: true });
  });

  it("local: close() releases the watchdog; outliveOwner starts none", async () => {
    const env = await createEnvironment({ backend: "local" });
    const dir = env.paths.snapshot.slice(0, env.paths.snapshot.lastIndexOf("/"));
    const watchdogs = pidsWithCmdline("shellwright-watchdog", dir);
    expect(watchdogs).toHaveLength(1);
    watchdogs.forEach((pid) => started.add(pid));
    await env.close();
    await eventually(() => !alive(watchdogs[0]!), "the watchdog exits at close");

    const kept = await createEnvironment({ backend: "local", outliveOwner: true });
    const keptDir = kept.paths.snapshot.slice(0, kept.paths.snapshot.lastIndexOf("/"));
    expect(pidsWithCmdline("shellwright-watchdog", keptDir)).toEqual([]);
    await kept.close();
  });

  it.runIf(dockerEnabled)(
    "docker: the container of a SIGKILLed owner is removed",
    async () => {
      const { child, report } = await startOwner([{ backend: "docker", image }]);
      const id = report.sessions[0]!.hostname;
      const exists = () =>
        spawnSync("docker", ["ps", "-a", "-q", "--filter", `id=${id}`], { encoding: "utf8" }).stdout.trim() !== "";
      expect(exists()).toBe(true);
      killOwner(child);
      await eventually(() => !exists(), "the container is removed", 60_000);
    },
    120_000,
  );

  it.runIf(sshTestEnabled)(
    "ssh: the remote job, the remote dir, the master and the control dir go with a SIGKILLed owner",
    async () => {
      const config = sshTestConfig();
      const { child, report } = await startOwner([{ ...config, connectTimeoutMs: 30_000 }]);
      const session = report.sessions[0]!;
      const controlDir = readdirSync(tmpdir())
        .filter((n) => n.startsWith("shellwright-ssh-"))
        .map((n) => join(tmpdir(), n))
        .find((d) => {
          try {
            return readFileSync(join(d, "owner"), "utf8").trim().endsWith(`/${report.owner}`);
          } catch {
            return false;
          }
        });
      expect(controlDir).toBeDefined();
      const masters = pidsWithCmdline("ssh", `ControlPath=${controlDir}/master`).filter(
        (pid) => !pidsWithCmdline("shellwright-watchdog").includes(pid),
      );
      const loopback = config.host === "127.0.0.1" || config.host === "localhost";
      killOwner(child);
      await eventually(() => !existsSync(controlDir!), "the control dir is removed", 60_000);
      await eventually(() => masters.every((pid) => !alive(pid)), "the master exits", 60_000);
      if (loopback) {
        // The test sshd runs on this machine: the remote side is visible here.
        await eventually(() => !alive(session.pids[0]!), "the remote background job dies", 60_000);
        await eventually(() => !existsSync(session.stateDir), "the remote dir is removed", 60_000);
      }
    },
    120_000,
  );
});
