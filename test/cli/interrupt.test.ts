/**
 * SIGINT, SIGTERM and SIGHUP on `shellwright exec`, as real processes: the
 * command's whole tree is killed, a one-off session's state dir is removed,
 * a named session stays usable, and the exit code is 128 + the signal.
 */

import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, cliHome, exited, spawnCli } from "../helpers/cli.js";
import { alive, eventually } from "../helpers/processes.js";

const where = cliHome();
const started: ChildProcess[] = [];
afterAll(() => {
  // A failed test would leave its CLI (and the command) running.
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  where.remove();
});

const EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/** The pids of the shell running the command and its children (both sleeps), once both sleeps run. */
async function commandTree(pidfile: string): Promise<number[]> {
  await eventually(() => existsSync(pidfile) && readFileSync(pidfile, "utf8").endsWith("\n"), "the pid file");
  const background = Number(readFileSync(pidfile, "utf8"));
  const shell = Number(readFileSync(`/proc/${background}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
  const children = (): number[] =>
    readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .filter((pid) => {
        try {
          return Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]) === shell;
        } catch {
          return false;
        }
      });
  await eventually(() => children().length >= 2, "both sleeps");
  return [shell, ...children()];
}

const stateDirs = (): string[] => readdirSync(where.runtime).filter((name) => name.startsWith("shellwright-"));

describe("shellwright exec interrupted", () => {
  for (const signal of Object.keys(EXIT) as NodeJS.Signals[]) {
    it(`by ${signal} kills the command's tree, removes the state dir and exits ${EXIT[signal]}`, async () => {
      const pidfile = join(where.runtime, `${signal}.pid`);
      const child = spawnCli(where, ["exec", `sleep 300 & echo $! > ${pidfile}; sleep 300`]);
      started.push(child);
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const tree = await commandTree(pidfile);
      expect(stateDirs()).toHaveLength(1);
      child.kill(signal);
      expect(await exited(child)).toBe(EXIT[signal]);
      // A killed process may still be on its way out when the CLI exits; without the kill these live 300 s.
      await eventually(() => tree.every((pid) => !alive(pid)), "the command's tree to be gone");
      expect(stateDirs()).toEqual([]);
      expect(stderr).toContain("[Command interrupted]");
    });
  }

  it("by SIGINT leaves a named session usable", async () => {
    expect(cli(where, ["exec", "-s", "survivor", "cd / && export KEPT=yes"]).code).toBe(0);
    const pidfile = join(where.runtime, "named.pid");
    const child = spawnCli(where, ["exec", "-s", "survivor", `sleep 300 & echo $! > ${pidfile}; sleep 300`]);
    started.push(child);
    const tree = await commandTree(pidfile);
    child.kill("SIGINT");
    expect(await exited(child)).toBe(130);
    await eventually(() => tree.every((pid) => !alive(pid)), "the command's tree to be gone");
    expect(cli(where, ["exec", "-s", "survivor", "pwd; echo $KEPT"])).toMatchObject({ code: 0, stdout: "/\nyes\n" });
    expect(cli(where, ["close", "survivor"]).code).toBe(0);
  });
});
