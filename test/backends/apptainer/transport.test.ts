/**
 * The Apptainer backend through the stand-in executable (Apptainer is not
 * packaged for this OS): what argv it sends, that secrets stay off command
 * lines, that a timeout kills inside the instance, and its errors.
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { BackendUnavailableError, createEnvironment, InvalidOptionError, SpawnError } from "../../../src/index.js";
import { aliveScript } from "../../helpers/processes.js";

const standIn = fileURLToPath(new URL("../../fixtures/apptainer-standin/apptainer", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "sw-apptainer-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Every recorded invocation of the stand-in, in order. */
function invocations(logDir: string): string[][] {
  return readdirSync(logDir)
    .filter((name) => !name.endsWith(".tmp"))
    .sort()
    .map((name) => {
      const raw = readFileSync(join(logDir, name), "utf8");
      const newline = raw.indexOf("\n");
      const count = Number(raw.slice(0, newline));
      const args = raw
        .slice(newline + 1)
        .split("\0")
        .slice(0, count);
      expect(args).toHaveLength(count);
      return args;
    });
}

function withStandInLog<T>(fn: (logDir: string) => Promise<T>): Promise<T> {
  const logDir = mkdtempSync(join(work, "log-"));
  const previous = process.env.SHELLWRIGHT_APPTAINER_STANDIN_LOG;
  process.env.SHELLWRIGHT_APPTAINER_STANDIN_LOG = logDir;
  return fn(logDir).finally(() => {
    if (previous === undefined) delete process.env.SHELLWRIGHT_APPTAINER_STANDIN_LOG;
    else process.env.SHELLWRIGHT_APPTAINER_STANDIN_LOG = previous;
  });
}

describe("apptainer backend (stand-in)", () => {
  it("starts one instance with the configured flags, execs into it without --pwd, and stops it", async () => {
    await withStandInLog(async (logDir) => {
      const bindHost = mkdtempSync(join(work, "bind-"));
      const env = await createEnvironment({
        backend: "apptainer",
        image: "docker://debian:bookworm-slim",
        executable: standIn,
        scratchDir: join(work, "scratch"),
        binds: [`${bindHost}:/data:ro`],
        memoryMiB: 512,
        cpus: 1.5,
        env: { SW_SECRET_TOKEN: "hunter2-secret-value" },
        // The argv of each exec is what this test reads: the plain path's (the fast path has its own test).
        fastPath: false,
      });
      const r = await env.execute("echo $SW_SECRET_TOKEN; pwd");
      expect(r.exitCode).toBe(0);
      expect(r.output.split("\n")[0]).toBe("hunter2-secret-value");
      await env.close();

      const calls = invocations(logDir);
      expect(calls[0]).toEqual(["version"]);
      const start = calls[1]!;
      const name = start.at(-1)!;
      expect(name).toMatch(/^shellwright_[0-9a-f]{12}$/);
      expect(start).toEqual([
        "instance",
        "start",
        "--containall",
        "--no-home",
        "--writable-tmpfs",
        "--bind",
        `${bindHost}:/data:ro`,
        "--memory",
        "512M",
        "--cpus",
        "1.5",
        "docker://debian:bookworm-slim",
        name,
      ]);
      const execs = calls.filter((args) => args[0] === "exec");
      expect(execs.length).toBeGreaterThanOrEqual(2); // init + the command
      for (const args of execs) {
        expect(args.slice(0, 3)).toEqual(["exec", "--cleanenv", `instance://${name}`]);
        expect(args).not.toContain("--pwd");
      }
      // The init shell is a login shell with the client's environment; later ones start from an empty one.
      // Both carry the kill marks (call and session) on env's command line.
      expect(execs[0]![3]).toBe("env");
      expect(execs[0]!.slice(4, 6).map((a) => a.split("=")[0])).toEqual(["SHELLWRIGHT_SESSION", "SHELLWRIGHT_CALL"]);
      expect(execs[0]!.slice(6, 8)).toEqual(["bash", "-c"]);
      expect(execs[1]!.slice(3, 6)).toEqual(["env", "-i", "SHLVL=1"]);
      expect(execs[1]!.slice(8, 10)).toEqual(["bash", "-c"]);
      expect(calls.at(-1)).toEqual(["instance", "stop", name]);
      // The secret reached the command through APPTAINERENV_*, never through argv.
      for (const args of calls) expect(args.join(" ")).not.toContain("hunter2-secret-value");
    });
  });

  it("uses --home and --overlay when configured", async () => {
    await withStandInLog(async (logDir) => {
      const home = mkdtempSync(join(work, "home-"));
      const overlay = join(work, "overlay");
      const env = await createEnvironment({
        backend: "apptainer",
        image: "docker://alpine",
        executable: standIn,
        scratchDir: join(work, "scratch"),
        homeDir: home,
        overlay,
      });
      expect((await env.execute("echo $HOME")).output).toBe(`${home}\n`);
      await env.close();
      const start = invocations(logDir)[1]!;
      expect(start.slice(0, 7)).toEqual(["instance", "start", "--containall", "--home", home, "--overlay", overlay]);
      expect(start).not.toContain("--writable-tmpfs");
    });
  });

  it("kills a timed-out command inside the instance, through an exec of the kill script", async () => {
    await withStandInLog(async (logDir) => {
      const env = await createEnvironment({
        backend: "apptainer",
        image: "docker://alpine",
        executable: standIn,
        scratchDir: join(work, "scratch"),
      });
      const pidFile = join(work, `sleeper-${Date.now()}`);
      const r = await env.execute(`sleep 300 & echo $! > ${pidFile}; wait`, { timeoutMs: 1000 });
      expect(r).toMatchObject({ exitCode: 124, timedOut: true });
      const sleeper = Number(readFileSync(pidFile, "utf8"));
      expect((await env.execute(aliveScript([sleeper]))).output).toBe("");
      await env.close();
      const killExecs = invocations(logDir).filter(
        (args) => args[0] === "exec" && args.at(-1)!.includes("__shellwright_killed"),
      );
      expect(killExecs.length).toBeGreaterThanOrEqual(1);
      expect(killExecs[0]!.slice(3, 5)).toEqual(["bash", "-c"]);
    });
  });

  it("sends a script over the argv limit on stdin, ahead of the command's own stdin", async () => {
    const env = await createEnvironment({
      backend: "apptainer",
      image: "docker://alpine",
      executable: standIn,
      scratchDir: join(work, "scratch"),
    });
    try {
      const big = "x".repeat(150_000);
      const r = await env.execute(`v='${big}'; echo \${#v}; cat`, { stdin: "after-the-script" });
      expect(r).toMatchObject({ exitCode: 0, output: "150000\nafter-the-script" });
    } finally {
      await env.close();
    }
  });

  it("rejects bad options, naming the option and the value", async () => {
    await expect(createEnvironment({ backend: "apptainer" } as never)).rejects.toThrow(InvalidOptionError);
    await expect(createEnvironment({ backend: "apptainer" } as never)).rejects.toThrow(
      /image must be a string, got undefined/,
    );
    await expect(createEnvironment({ backend: "apptainer", image: "x.sif", binds: ["a:b:rx"] })).rejects.toThrow(
      /binds\[0\] must look like .*"a:b:rx"/,
    );
    await expect(createEnvironment({ backend: "apptainer", image: "x.sif", cpus: -1 })).rejects.toThrow(
      /cpus must be a positive number of CPUs, got -1/,
    );
    await expect(createEnvironment({ backend: "apptainer", image: "x.sif", memoryMiB: 1.5 })).rejects.toThrow(
      /memoryMiB must be a positive integer, got 1.5/,
    );
    await expect(createEnvironment({ backend: "apptainer", image: "x.sif", imagee: "y" } as never)).rejects.toThrow(
      /Unknown apptainer backend option "imagee"/,
    );
  });

  it("says which executable is missing", async () => {
    const error = await createEnvironment({
      backend: "apptainer",
      image: "x.sif",
      executable: join(work, "no-such-apptainer"),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpawnError);
    expect((error as Error).message).toContain("no-such-apptainer");
  });

  it("reports Apptainer's own error when the instance cannot start", async () => {
    const error = await createEnvironment({
      backend: "apptainer",
      image: join(work, "missing.sif"),
      executable: standIn,
      scratchDir: join(work, "scratch"),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendUnavailableError);
    expect((error as Error).message).toMatch(
      /Could not start the Apptainer instance .*missing\.sif.*FATAL: .*no such file or directory/s,
    );
  });
});
