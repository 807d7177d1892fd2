/**
 * `shellwright sessions --prune` after an owner and its watchdog were
 * SIGKILLed together: a real node process (test/fixtures/owner-jobs.mjs, on
 * the built dist/) opens a session and starts a PTY process, a background
 * process, an exec_command, a nohup job, a setsid daemon and a setsid job
 * with an empty environment. While the owner lives, --prune touches none of
 * them (even with its watchdog dead); once the owner is dead too, --prune ends
 * them all (checked by pid and start time in /proc) before it reports the
 * state dir (local), control dir (ssh) or container (docker) removed, and on
 * ssh the remote dir goes too. The empty-environment job is expected to go
 * only where a cgroup, a sandbox or a container holds it. Local plain, fast
 * and sandboxed; ssh plain and fast (the test sshd is on loopback, so the
 * remote processes are visible here); docker.
 */

import { spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, cliHome } from "../helpers/cli.js";
import { killAll, pidsWithCmdline } from "../helpers/proc-scan.js";
import { alive, eventually } from "../helpers/processes.js";
import { noLocalHelper, skipUnless } from "../helpers/native-helper.js";
import { sshTestConfig, sshTestEnabled } from "../backends/ssh/ssh-env.js";
import { SessionCgroup } from "../../src/backends/local/session-cgroup.js";
import { startOwnerFixture } from "../helpers/owner-fixture.js";

const fixture = join(import.meta.dirname, "../fixtures/owner-jobs.mjs");
const where = cliHome();
// ssh control dirs go under the temp dir: a private one, shared by the owner and the CLI.
const tmp = join(where.runtime, "tmp");
mkdirSync(tmp, { recursive: true });
where.env.TMPDIR = tmp;
const started = new Set<number>();
const probe = SessionCgroup.create();
probe?.remove();
const hostCgroup = probe !== undefined;
afterAll(() => {
  killAll(started);
  where.remove();
});

const JOBS = { pty: 4801, background: 4802, exec: 4803, nohup: 4804, setsid: 4805, envless: 4806 } as const;
type JobName = keyof typeof JOBS;

interface Report {
  owner: number;
  stateDir: string;
  /** The container's id, in a docker session. */
  hostname: string;
  jobs: Record<JobName, number>;
}

/** Field `index` (0-based after the command name) of /proc/PID/stat, or undefined when it is gone. */
function statField(pid: number, index: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[index];
  } catch {
    return undefined;
  }
}

/**
 * The pid this machine gives a job that reported `nsPid` from inside its own pid namespace (the sandbox): the
 * process whose NSpid ends with it and whose argv is the job's sleep. Outside a namespace both are the same.
 */
function hostPid(nsPid: number, seconds: number): number {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8") !== `sleep\0${seconds}\0`) continue;
      const nspid = /^NSpid:\s+(.*)$/m
        .exec(readFileSync(`/proc/${name}/status`, "utf8"))?.[1]
        ?.trim()
        .split(/\s+/);
      if (Number(nspid?.at(-1)) === nsPid) return Number(name);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no process sleep ${seconds} with pid ${nsPid} in its namespace`);
}

/** A job that is still the same process (same pid and start time) and not a zombie. */
const running = (job: { pid: number; start: string }) => alive(job.pid) && statField(job.pid, 19) === job.start;

async function startOwner(config: object, pidDir: string): Promise<{ child: ChildProcess; report: Report }> {
  const { child, report } = await startOwnerFixture<Report>(
    fixture,
    [JSON.stringify(config), pidDir],
    started,
    where.env,
  );
  return { child, report };
}

/** The dirs in the CLI's roots whose owner file names `owner`. */
function ownedDirs(owner: number): string[] {
  return [where.runtime, tmp].flatMap((root) =>
    readdirSync(root)
      .filter((name) => name.startsWith("shellwright-"))
      .map((name) => join(root, name))
      .filter((dir) => {
        try {
          return readFileSync(join(dir, "owner"), "utf8").trim().endsWith(`/${owner}`);
        } catch {
          return false;
        }
      }),
  );
}

function prune(): { pruned: { kind: string; what: string }[] } {
  const result = cli(where, ["sessions", "--json", "--prune"]);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { pruned: { kind: string; what: string }[] };
}

let round = 0;
interface Variant {
  config: (pidDir: string) => object;
  /** Where the session keeps what records it: a local state dir, an ssh control dir, a container. */
  kind?: "local" | "ssh" | "docker";
  /** A sandbox's jobs die with their owner (bwrap --die-with-parent): nothing is left for --prune to end. */
  diesWithOwner?: boolean;
  /**
   * The job that emptied its environment and left every group is found only by the session's cgroup (local,
   * where the host allows one) or ends with the sandbox's PID namespace or the container; elsewhere it is not
   * expected to go (docs/guarantees.md, Processes, known limits).
   */
  endsEnvless?: boolean;
}

const containerExists = (id: string) =>
  spawnSync("docker", ["ps", "-a", "-q", "--filter", `id=${id}`], { encoding: "utf8" }).stdout.trim() !== "";

async function pruneAfterOwnerDeath({
  config,
  kind = "local",
  diesWithOwner = false,
  endsEnvless = false,
}: Variant): Promise<void> {
  const pidDir = join(where.runtime, `pids-${round++}`);
  mkdirSync(pidDir, { recursive: true });
  chmodSync(pidDir, 0o777); // the ssh user may not be this one
  const { child, report } = await startOwner(config(pidDir), pidDir);
  const all = Object.entries(JOBS).map(([name, seconds]) => {
    const pid = hostPid(report.jobs[name as JobName], seconds);
    started.add(pid);
    return { name, pid, start: statField(pid, 19)! };
  });
  const jobs = all.filter((job) => endsEnvless || job.name !== "envless");
  // What --prune names when it removes the session: its dir, or its container (by the id its hostname is).
  const [dir] = kind === "docker" ? [] : ownedDirs(report.owner);
  if (kind !== "docker") expect(dir).toBeDefined();
  const removed = (items: { kind: string; what: string }[]) =>
    kind === "docker" ? !containerExists(report.hostname) : items.some((item) => item.what === dir);
  const watchdogs = pidsWithCmdline("shellwright-watchdog", dir ?? report.hostname);
  expect(watchdogs).toHaveLength(1);
  watchdogs.forEach((pid) => started.add(pid));
  const masters =
    kind === "ssh" ? pidsWithCmdline(`ControlPath=${dir}/master`).filter((p) => !watchdogs.includes(p)) : [];
  if (kind === "ssh") expect(masters.length).toBeGreaterThan(0);
  masters.forEach((pid) => started.add(pid));

  // A live owner's jobs are never touched, even with its watchdog dead.
  process.kill(watchdogs[0]!, "SIGKILL");
  await eventually(() => !alive(watchdogs[0]!), "the watchdog dies");
  expect(removed(prune().pruned)).toBe(false);
  expect(jobs.filter((job) => !running(job)).map((job) => job.name)).toEqual([]);

  const ended = new Promise((resolve) => child.once("exit", resolve));
  process.kill(child.pid!, "SIGKILL");
  await ended;
  // Nothing else ends them: without --prune, all of them would run on.
  if (!diesWithOwner) expect(jobs.filter((job) => !running(job)).map((job) => job.name)).toEqual([]);

  expect(removed(prune().pruned)).toBe(true);
  // Gone by the time --prune answers, not eventually.
  expect(jobs.filter(running).map((job) => job.name)).toEqual([]);
  if (kind !== "docker") {
    expect(existsSync(dir!)).toBe(false);
    expect(existsSync(report.stateDir), "the state dir (ssh: the remote dir) is removed").toBe(false);
  }
  await eventually(() => masters.every((pid) => !alive(pid)), "the ssh master exits");
}

describe("sessions --prune ends a dead owner's jobs", () => {
  it("local, plain path: PTY, background, exec_command, nohup, setsid and env -i jobs", async () => {
    await pruneAfterOwnerDeath({ config: () => ({ backend: "local", fastPath: false }), endsEnvless: hostCgroup });
  }, 120_000);

  it("local, fast path: PTY, background, exec_command, nohup, setsid and env -i jobs", async (context) => {
    skipUnless(context, noLocalHelper);
    await pruneAfterOwnerDeath({ config: () => ({ backend: "local" }), endsEnvless: hostCgroup });
  }, 120_000);

  it("local sandbox: PTY, background, exec_command, nohup, setsid and env -i jobs", async () => {
    await pruneAfterOwnerDeath({
      config: (pidDir) => ({ backend: "local", sandbox: { writable: [pidDir] } }),
      diesWithOwner: true,
      endsEnvless: true,
    });
  }, 120_000);

  // The test sshd runs on this machine: the remote side is visible here.
  const loopback = sshTestEnabled && ["127.0.0.1", "localhost"].includes(sshTestConfig().host);
  it.runIf(loopback)(
    "ssh, plain path: the remote jobs and the remote dir go, and the master",
    async () => {
      await pruneAfterOwnerDeath({
        config: () => ({ ...sshTestConfig(), connectTimeoutMs: 30_000, fastPath: false }),
        kind: "ssh",
      });
    },
    180_000,
  );

  it.runIf(loopback)(
    "ssh, fast path: the remote jobs and the remote dir go, and the master",
    async () => {
      await pruneAfterOwnerDeath({ config: () => ({ ...sshTestConfig(), connectTimeoutMs: 30_000 }), kind: "ssh" });
    },
    180_000,
  );

  const docker = process.env.SHELLWRIGHT_TEST_DOCKER === "1";
  const image = process.env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm";
  // The container is removed with everything in it: docker was never affected; this keeps it so.
  it.runIf(docker)(
    "docker, fast path: the container goes, and every job with it",
    async () => {
      await pruneAfterOwnerDeath({
        config: () => ({ backend: "docker", image, network: false }),
        kind: "docker",
        endsEnvless: true,
      });
    },
    180_000,
  );
});
