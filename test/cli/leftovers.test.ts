/**
 * What named sessions and dead owners leave behind, on the built command:
 * `close NAME` kills every job the session started in earlier processes, an
 * ssh exec leaves no master, and `sessions` lists (`--prune` removes) a named
 * session whose first exec was SIGKILLed, a stray state dir of a dead owner,
 * and a labelled container of a dead owner.
 */

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, cliHome, exited, spawnCli } from "../helpers/cli.js";
import { killAll, pidsWithArgv, pidsWithCmdline } from "../helpers/proc-scan.js";
import { alive, eventually } from "../helpers/processes.js";
import { sshTestConfig, sshTestEnabled } from "../backends/ssh/ssh-env.js";
import { DOCKER_TEST_IMAGE as image, DOCKER_TEST_ENABLED as dockerEnabled } from "../helpers/docker-test.js";

const where = cliHome();
const started = new Set<number>();
afterAll(() => {
  killAll(started);
  where.remove();
});

/** A pid that belonged to a process that has ended. */
function deadPid(): number {
  const child = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
  return Number(child.stdout.trim());
}

interface Listing {
  leftovers: { kind: string; what: string; owner: string }[];
  pruned?: { kind: string; what: string }[];
}

function sessionsJson(...flags: string[]): Listing {
  const result = cli(where, ["sessions", "--json", ...flags]);
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Listing;
}

describe("named sessions' leftovers", () => {
  it("close NAME kills the background jobs of every earlier exec (local)", () => {
    const first = cli(where, ["exec", "-s", "jobs", "sleep 4731 >/dev/null 2>&1 & echo $!"]);
    expect(first.code).toBe(0);
    const pid = Number(first.stdout.trim());
    started.add(pid);
    expect(cli(where, ["exec", "-s", "jobs", "true"]).code).toBe(0);
    // The job outlives the execs: the session is meant to persist until closed.
    expect(alive(pid)).toBe(true);
    expect(cli(where, ["close", "jobs"]).code).toBe(0);
    return eventually(() => !alive(pid), "the first exec's background job dies at close");
  });

  it("a SIGKILLed first exec of a new name is listed, and --prune removes its dir and kills its jobs", async () => {
    const before = new Set(pidsWithArgv("sleep", "4732"));
    const before600 = new Set(pidsWithArgv("sleep", "600"));
    const child = spawnCli(where, ["exec", "-s", "killed", "sleep 4732 >/dev/null 2>&1 & sleep 600"]);
    started.add(child.pid!);
    // A short line may wait in the stream for more output: find the job in /proc instead.
    let pid = 0;
    await eventually(
      () => (pid = pidsWithArgv("sleep", "4732").find((p) => !before.has(p)) ?? 0) > 0,
      "the job starts",
    );
    started.add(pid);
    await eventually(
      () => pidsWithArgv("sleep", "600").some((p) => !before600.has(p)),
      "the foreground command starts",
    );
    const foreground = pidsWithArgv("sleep", "600").filter((p) => !before600.has(p));
    child.kill("SIGKILL");
    await exited(child);

    const dir = join(where.home, "sessions", "killed");
    expect(existsSync(dir)).toBe(true);
    const listed = sessionsJson();
    expect(listed.leftovers).toContainEqual({
      kind: "unfinished-session",
      what: "killed",
      owner: `${hostname()}/${child.pid}`,
    });
    expect(cli(where, ["sessions"]).stdout).toMatch(/unfinished-session\tkilled\towner /);

    const pruned = sessionsJson("--prune");
    expect(pruned.pruned).toContainEqual(expect.objectContaining({ kind: "unfinished-session", what: "killed" }));
    expect(pruned.leftovers.filter((l) => l.what === "killed")).toEqual([]);
    expect(existsSync(dir)).toBe(false);
    await eventually(() => !alive(pid), "the background job dies");
    await eventually(() => foreground.every((p) => !alive(p)), "the killed call's foreground command dies");
  });

  it("a stray state dir of a dead owner is listed and pruned; a live owner's is left alone", () => {
    const dead = join(where.runtime, "shellwright-deadown");
    const live = join(where.runtime, "shellwright-liveown");
    for (const [dir, owner] of [
      [dead, `${hostname()}/${deadPid()}`],
      [live, `${hostname()}/${process.pid}`],
    ] as const) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "owner"), `${owner}\n`);
      writeFileSync(join(dir, "shellwright-snap-0.sh"), "export SECRET=x\n");
    }
    const listed = sessionsJson();
    expect(listed.leftovers).toContainEqual(expect.objectContaining({ kind: "state-dir", what: dead }));
    expect(listed.leftovers.map((l) => l.what)).not.toContain(live);
    sessionsJson("--prune");
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
  });

  it.runIf(dockerEnabled)(
    "a labelled container of a dead owner is listed and pruned",
    async () => {
      const name = `shellwright-leftover-${process.pid}`;
      const run = spawnSync(
        "docker",
        ["run", "-d", "--name", name, "--label", "shellwright=1", "--label", "shellwright.keep=0"].concat([
          "--label",
          `shellwright.owner=${hostname()}/${deadPid()}`,
          image,
          "sleep",
          "infinity",
        ]),
        { encoding: "utf8" },
      );
      expect(run.status).toBe(0);
      const exists = () =>
        spawnSync("docker", ["ps", "-a", "-q", "--filter", `name=^${name}$`], { encoding: "utf8" }).stdout.trim() !==
        "";
      try {
        expect(sessionsJson().leftovers).toContainEqual(
          expect.objectContaining({ kind: "docker-container", what: name }),
        );
        sessionsJson("--prune");
        expect(exists()).toBe(false);
      } finally {
        if (exists()) spawnSync("docker", ["rm", "-f", name]);
      }
    },
    120_000,
  );

  // The test sshd runs on this machine: the remote side is visible here.
  const loopback = sshTestEnabled && ["127.0.0.1", "localhost"].includes(sshTestConfig().host);
  it.runIf(loopback)(
    "ssh: an exec leaves no master behind, and close NAME kills the jobs of earlier execs",
    async () => {
      const config = join(where.runtime, "ssh.json");
      writeFileSync(config, JSON.stringify({ ...sshTestConfig(), connectTimeoutMs: 30_000 }));
      const flag = join(where.runtime, "ssh-go");
      const before = new Set(pidsWithArgv("sleep", "4733"));
      const child = spawnCli(where, [
        "exec",
        "--config",
        config,
        "-s",
        "remote",
        `sleep 4733 >/dev/null 2>&1 & while [ ! -e ${flag} ]; do sleep 0.1; done`,
      ]);
      let pid = 0;
      await eventually(
        () => (pid = pidsWithArgv("sleep", "4733").find((p) => !before.has(p)) ?? 0) > 0,
        "the remote job starts",
        60_000,
      );
      started.add(pid);
      const controlDir = readdirSync(tmpdir())
        .map((n) => join(tmpdir(), n))
        .find((d) => {
          try {
            return readFileSync(join(d, "owner"), "utf8").trim() === `${hostname()}/${child.pid}`;
          } catch {
            return false;
          }
        });
      expect(controlDir).toBeDefined();
      const masters = pidsWithCmdline(`${controlDir}/master`).filter((p) => p !== child.pid);
      expect(masters.length).toBeGreaterThan(0);
      masters.forEach((p) => started.add(p));
      writeFileSync(flag, "");
      expect(await exited(child)).toBe(0);
      await eventually(() => masters.every((p) => !alive(p)), "the exec's master exits with it");
      await eventually(() => !existsSync(controlDir!), "the exec's control dir is removed");

      expect(alive(pid)).toBe(true);
      expect(cli(where, ["close", "remote"]).code).toBe(0);
      await eventually(() => !alive(pid), "the remote job dies at close");
    },
    120_000,
  );
});
