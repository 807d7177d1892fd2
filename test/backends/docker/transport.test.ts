/**
 * Docker-only behaviour, against a real Docker Engine (SHELLWRIGHT_TEST_DOCKER=1,
 * set up by scripts/test-env/docker.sh). Everything is checked from outside
 * too: `docker inspect`, `docker exec … ps`, and the calls the backend made.
 */

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  BackendUnavailableError,
  createEnvironment,
  type DockerCall,
  type DockerConfig,
  type Environment,
} from "../../../src/index.js";
import { EngineApi, defaultSocketPath } from "../../../src/backends/docker/engine.js";
import { startExec } from "../../../src/backends/docker/exec.js";
import {
  listDockerContainers,
  reapDockerContainers,
  removeDockerContainers,
} from "../../../src/backends/docker/containers.js";
import { dockerLeftovers } from "../../../src/backends/docker/leftovers.js";
import { DOCKER_TEST_IMAGE as image, DOCKER_TEST_ENABLED as enabled } from "../../helpers/docker-test.js";
import { eventually } from "../../helpers/processes.js";

/** The docker CLI, from outside the backend. */
function docker(...args: string[]): string {
  // A stuck engine fails the test instead of blocking the whole run.
  return execFileSync("docker", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
}
function inspect(container: string): {
  Id: string;
  Name: string;
  HostConfig: Record<string, unknown>;
  Config: { Env: string[] | null };
  State: { Running: boolean };
} {
  return JSON.parse(docker("inspect", container))[0];
}
function exists(container: string): boolean {
  try {
    docker("inspect", container);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!enabled)("docker backend (real engine)", () => {
  const open: Environment[] = [];
  const leftovers: string[] = [];

  async function session(
    config: Partial<DockerConfig> = {},
  ): Promise<{ env: Environment; calls: DockerCall[]; container: string }> {
    const calls: DockerCall[] = [];
    // No network unless a test asks: dockerd 20.10's bridge teardown has deadlocked
    // under many concurrent removals here, and only a few tests need the default.
    const env = await createEnvironment({
      backend: "docker",
      image,
      network: false,
      trace: (call) => calls.push(call),
      ...config,
    });
    open.push(env);
    await env.execute("true");
    // The full id, from the engine calls the backend made.
    const container = calls.flatMap((c) =>
      c.via === "api" ? (/^\/containers\/([0-9a-f]{64})\/exec$/.exec(c.path)?.[1] ?? []) : [],
    )[0]!;
    leftovers.push(container);
    return { env, calls, container };
  }

  // Each test's containers go when it ends, one at a time, so few run at once.
  afterEach(async () => {
    for (const env of open.splice(0)) await env.close().catch(() => undefined);
    for (const container of leftovers.splice(0)) {
      try {
        docker("rm", "-f", container);
      } catch {
        // already removed
      }
    }
  });

  describe("environment forwarding", () => {
    it("sends forwarded variables once, at init, and never on a later exec", async () => {
      process.env.SW_TEST_FORWARDED = "forwarded-value";
      process.env.SW_TEST_EMPTY = "";
      try {
        // The plain path's execs (the fast path runs later calls without one).
        const { env, calls } = await session({
          fastPath: false,
          forwardEnv: ["SW_TEST_FORWARDED", "SW_TEST_EMPTY", "SW_TEST_MISSING"],
          env: { SW_TEST_SET: "set-value" },
        });
        expect((await env.execute('echo "$SW_TEST_FORWARDED $SW_TEST_SET [${SW_TEST_EMPTY-unset}]"')).output).toBe(
          "forwarded-value set-value [unset]\n",
        );
        await env.execute("export LATER=1");
        await env.execute("true", { stdin: "data" });

        const execs = calls.filter(
          (c): c is Extract<DockerCall, { via: "api" }> => c.via === "api" && /\/containers\/[^/]+\/exec$/.test(c.path),
        );
        expect(execs.length).toBeGreaterThanOrEqual(4);
        const [init, ...later] = execs.map((c) => c.body as { Env?: string[]; Cmd: string[]; AttachStdin: boolean });
        // The trace names the variables, never their values.
        expect(init!.Env).toEqual(["SW_TEST_FORWARDED=…", "SW_TEST_SET=…"]);
        for (const body of later) {
          expect(body.Env).toBeUndefined();
          // The kill marks (call and session) ride on env's command line, between -i and bash.
          expect(body.Cmd.slice(3, 6)).toEqual(["shellwright", "env", "-i"]);
          expect(body.Cmd.slice(6, 8).map((a) => a.split("=")[0])).toEqual(["SHELLWRIGHT_SESSION", "SHELLWRIGHT_CALL"]);
          expect(body.Cmd[8]).toBe("bash");
        }
        // Every exec of a call attaches stdin: its first line is the call's secret.
        expect(later.map((b) => b.AttachStdin)).toEqual([true, true, true, true]);
        // No CLI invocation carried a value.
        const argv = calls.flatMap((c) => (c.via === "cli" ? c.argv : []));
        expect(argv.length).toBeGreaterThan(0);
        expect(argv.join(" ")).not.toContain("forwarded-value");
        expect(argv.join(" ")).not.toContain("set-value");
      } finally {
        delete process.env.SW_TEST_FORWARDED;
        delete process.env.SW_TEST_EMPTY;
      }
    });

    it("never shows a forwarded secret in a process list, on the host or in the container", async () => {
      const secret = `sw-secret-${Math.random().toString(36).slice(2)}`;
      process.env.SW_TEST_SECRET = secret;
      try {
        const { env, container } = await session({ forwardEnv: ["SW_TEST_SECRET"] });
        const running = env.execute("sleep 3; echo ${#SW_TEST_SECRET}");
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const hostPs = execFileSync("ps", ["-eww", "-o", "args"], { encoding: "utf8" });
        const containerPs = docker("exec", container, "ps", "-eww", "-o", "args");
        expect(containerPs).toContain("sleep 3");
        expect(hostPs).not.toContain(secret);
        expect(containerPs).not.toContain(secret);
        // Nor in the container's configuration: it was never a `docker run -e`.
        expect((inspect(container).Config.Env ?? []).join("\n")).not.toContain(secret);
        expect((await running).output).toBe(`${secret.length}\n`);
      } finally {
        delete process.env.SW_TEST_SECRET;
      }
    });
  });

  describe("container settings", () => {
    it("applies the security flags", async () => {
      const { env, container } = await session({ network: true });
      const host = inspect(container).HostConfig;
      expect(host.CapDrop).toEqual(["ALL"]);
      expect((host.CapAdd as string[]).map((cap) => cap.replace(/^CAP_/, "")).sort()).toEqual([
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "SETGID",
        "SETUID",
      ]);
      expect(host.SecurityOpt).toEqual(["no-new-privileges"]);
      expect(host.PidsLimit).toBe(256);
      expect(host.Init).toBe(true);
      // And the kernel enforces them on the commands.
      const status = (await env.execute("grep -E '^(CapEff|NoNewPrivs):' /proc/self/status")).output;
      expect(status).toMatch(/NoNewPrivs:\s+1/);
      const capEff = BigInt(`0x${/CapEff:\s+([0-9a-f]+)/.exec(status)![1]}`);
      const CAP_SYS_ADMIN = 21n;
      const CAP_CHOWN = 0n;
      expect(capEff & (1n << CAP_SYS_ADMIN)).toBe(0n);
      expect(capEff & (1n << CAP_CHOWN)).not.toBe(0n);
      expect((await env.execute("mount -t tmpfs none /mnt 2>&1; echo rc=$?")).output).toMatch(/rc=(?!0)/);
    });

    it("applies cpu, memory and pids limits, and they hold", async () => {
      const { env, container } = await session({ cpus: 0.5, memoryMiB: 128, pidsLimit: 40 });
      const host = inspect(container).HostConfig;
      expect(host.NanoCpus).toBe(500_000_000);
      expect(host.Memory).toBe(128 * 1024 * 1024);
      expect(host.PidsLimit).toBe(40);
      // Forks until the kernel refuses: fewer than the limit succeed. The children are reaped too: a
      // zombie still counts against pids.max, and the wrapper's next fork would fail and say so.
      const forks = await env.execute(
        `python3 -c '
import os, time
kids = []
try:
    for _ in range(200):
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        kids.append(pid)
except OSError:
    pass
print(len(kids), flush=True)
for k in kids:
    os.kill(k, 9)
    os.waitpid(k, 0)
'`,
        { timeoutMs: 30_000 },
      );
      const started = Number(forks.output.trim());
      expect(started, forks.output).toBeGreaterThan(0);
      expect(started).toBeLessThan(40);
      // Allocating past the memory (and swap) limit gets the process killed.
      const hog = await env.execute(
        'python3 -c \'b = bytearray(600 * 1024 * 1024); b[::4096] = b"x" * len(b[::4096]); print("survived")\'',
        { timeoutMs: 60_000 },
      );
      expect(hog.output).not.toMatch(/^survived$/m);
      expect(hog.output).toContain("Killed");
      expect(hog.exitCode).toBe(137);
      expect((await env.execute("echo still-usable")).output).toBe("still-usable\n");
    });

    it("runs without a network when network is false, and with the default bridge otherwise", async () => {
      const off = await session({ network: false });
      expect(inspect(off.container).HostConfig.NetworkMode).toBe("none");
      expect((await off.env.execute("ls /sys/class/net")).output.split("\n").filter(Boolean)).toEqual(["lo"]);
      const on = await session({ network: true });
      expect(inspect(on.container).HostConfig.NetworkMode).toBe("default");
      expect((await on.env.execute("ls /sys/class/net")).output.split("\n").filter(Boolean)).toEqual(["eth0", "lo"]);
    });

    it("mounts the host cwd at /workspace, starts there, and mounts volumes", async () => {
      const hostDir = mkdtempSync(join(tmpdir(), "sw-docker-mount-"));
      const dataDir = mkdtempSync(join(tmpdir(), "sw-docker-data-"));
      try {
        writeFileSync(join(hostDir, "from-host.txt"), "hello from the host\n");
        writeFileSync(join(dataDir, "ro.txt"), "read only\n");
        const { env } = await session({ mountCwd: hostDir, volumes: [`${dataDir}:/data:ro`] });
        expect(env.cwd).toBe("/workspace");
        expect((await env.execute("cat from-host.txt")).output).toBe("hello from the host\n");
        await env.execute("echo from-container > written.txt");
        expect(execFileSync("cat", [join(hostDir, "written.txt")], { encoding: "utf8" })).toBe("from-container\n");
        expect((await env.execute("cat /data/ro.txt")).output).toBe("read only\n");
        expect((await env.execute("touch /data/new 2>/dev/null; echo rc=$?")).output).toBe("rc=1\n");
      } finally {
        rmSync(hostDir, { recursive: true, force: true });
        rmSync(dataDir, { recursive: true, force: true });
      }
    });

    it("passes extra docker run args and labels", async () => {
      const { env, container } = await session({
        network: true,
        extraArgs: ["--hostname", "sw-extra"],
        labels: { "sw.test": "yes" },
      });
      expect((await env.execute("hostname")).output).toBe("sw-extra\n");
      const labels = (JSON.parse(docker("inspect", container))[0] as { Config: { Labels: Record<string, string> } })
        .Config.Labels;
      expect(labels).toMatchObject({ "sw.test": "yes", shellwright: "1", "shellwright.keep": "0" });
    });

    it("runs as the host user with runAsHostUser", async () => {
      const { env, container } = await session({ runAsHostUser: true });
      const user = `${process.getuid!()}:${process.getgid!()}`;
      expect((JSON.parse(docker("inspect", container))[0] as { Config: { User: string } }).Config.User).toBe(user);
      expect((await env.execute("echo $(id -u):$(id -g)")).output).toBe(`${user}\n`);
    });

    it("applies a disk limit where the storage driver can, and says why where it cannot", async () => {
      const backing = docker("info", "--format", "{{json .DriverStatus}}");
      const result = createEnvironment({ backend: "docker", image, diskMiB: 512 });
      if (/xfs/.test(backing)) {
        const env = await result;
        open.push(env);
        expect((await env.execute("df -m / | tail -1")).output).toMatch(/\s5\d\d\s/);
      } else {
        await expect(result).rejects.toThrow(/docker run failed.*storage-opt/s);
      }
    });

    it("starts in /root by default", async () => {
      const { env } = await session();
      expect(env.cwd).toBe("/root");
      expect((await env.execute("pwd")).output).toBe("/root\n");
    });
  });

  describe("completion", () => {
    it("learns each exit in-band, never waiting on the engine, even with background jobs holding the stream", async () => {
      // One exec per call: the plain path (the fast path's completion is tested in fast-path.test.ts).
      const { env, calls } = await session({ fastPath: false });
      calls.length = 0;
      for (const command of ["sleep 30 &", "sleep 31 & echo started", "echo plain", "exit 3"]) {
        const result = await env.execute(command, { timeoutMs: 20_000 });
        expect(result.timedOut).toBe(false);
      }
      expect((await env.execute("false")).exitCode).toBe(1);
      const api = calls.filter((c) => c.via === "api");
      expect(api.filter((c) => c.path.endsWith("/exec")).length).toBe(5);
      // The engine's exec inspect (which queues behind a lingering stream for seconds) was never needed.
      expect(api.filter((c) => /^\/exec\/[^/]+\/json$/.test(c.path))).toEqual([]);
    });

    it("passes the command's own stderr through beside the exit line, byte for byte", async () => {
      const { container } = await session();
      const engine = new EngineApi(defaultSocketPath());
      try {
        const handle = startExec(engine, {
          containerId: container,
          cmd: ["bash", "-c", "printf 'to-stderr\\377\\n' >&2; echo to-stdout; exit 4"],
          reportExit: true,
        });
        const chunks: Buffer[] = [];
        for await (const chunk of handle.output) chunks.push(Buffer.from(chunk));
        expect(await handle.wait()).toBe(4);
        const output = Buffer.concat(chunks);
        expect(output.includes(Buffer.from("to-stderr\xff\n", "latin1"))).toBe(true);
        expect(output.toString("latin1")).toContain("to-stdout\n");
        expect(output.toString("latin1")).not.toContain("SHELLWRIGHT");
      } finally {
        engine.close();
      }
    });
  });

  describe("killing inside the container", () => {
    for (const how of ["timeout", "interrupt"] as const) {
      it(`leaves no child, grandchild or setsid'd child behind after ${how === "timeout" ? "a timeout" : "an interrupt"}`, async () => {
        const { env, container } = await session({ killGraceMs: 500 });
        const command = "setsid sleep 301 & (sleep 302 & wait) & sleep 303 & echo spawned; wait";
        const controller = new AbortController();
        const result = await env.execute(command, {
          ...(how === "timeout" ? { timeoutMs: 1500 } : { signal: controller.signal }),
          onOutput: (text) => {
            if (how === "interrupt" && text.includes("spawned")) setTimeout(() => controller.abort(), 300);
          },
        });
        expect(result.exitCode).toBe(how === "timeout" ? 124 : 130);
        // Seen from outside, with the container's own ps.
        const ps = docker("exec", container, "ps", "-eo", "stat=,args=");
        const left = ps.split("\n").filter((line) => /sleep 30[123]/.test(line) && !line.startsWith("Z"));
        expect(left).toEqual([]);
        expect((await env.execute("echo usable")).output).toBe("usable\n");
      });
    }
  });

  describe("a container that dies", () => {
    it("gives a typed error mid-command, then recreates the container on the next call", async () => {
      const { env, container } = await session();
      await env.execute("export BEFORE=1");
      const running = env.execute("sleep 30", { timeoutMs: 60_000 });
      await new Promise((resolve) => setTimeout(resolve, 800));
      docker("kill", container);
      const error = await running.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(BackendUnavailableError);
      expect((error as Error).message).toMatch(/is gone.*next command starts a new container/);

      const after = await env.execute("cat /etc/hostname; echo [${BEFORE-unset}]");
      const [newContainer, before] = after.output.trim().split("\n");
      expect(newContainer).toMatch(/^[0-9a-f]{12}$/);
      expect(container.startsWith(newContainer!)).toBe(false);
      leftovers.push(newContainer!);
      expect(before).toBe("[unset]");
      expect(env.snapshotReady).toBe(true);
      await env.execute("export AFTER=2");
      expect((await env.execute("echo $AFTER")).output).toBe("2\n");
      // The dead one was cleaned up.
      expect(exists(container)).toBe(false);
    });

    it("says a removed container is gone between calls, and recreates it", async () => {
      const { env, container } = await session();
      docker("rm", "-f", container);
      await expect(env.execute("true")).rejects.toThrow(BackendUnavailableError);
      const again = await env.execute("echo back");
      expect(again.output).toBe("back\n");
    });

    it("keeps the session of a paused container: a retryable error while paused, the same state after", async () => {
      const { env, container } = await session({ fastPath: false });
      await env.execute("export BEFORE=kept; cd /tmp");
      docker("pause", container);
      try {
        const error = await env.execute("echo ran").then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(BackendUnavailableError);
        expect((error as Error).message).toMatch(/is paused, so the command did not run.*docker unpause.*kept/);
        // Still paused, still the same container: asking again says the same, nothing is replaced.
        await expect(env.execute("true")).rejects.toThrow(/is paused/);
      } finally {
        docker("unpause", container);
      }
      const after = await env.execute("echo [$BEFORE] $(pwd)");
      expect(after.output).toBe("[kept] /tmp\n");
      expect(exists(container)).toBe(true);
    });

    it.each([true, false])(
      "keeps a paused container through a leftover sweep (sessions --prune) while it is paused (issue 37.4, fastPath %s)",
      async (fastPath) => {
        // `docker pause` makes the engine say "paused", not "running": the sweep took that for a stopped
        // container and removed it, so the call after the unpause ran in a fresh one (cwd /tmp, variables gone).
        const { env, container } = await session({ fastPath });
        await env.execute("export BEFORE=kept; cd /usr");
        docker("pause", container);
        try {
          await expect(env.execute("echo ran", { timeoutMs: 1500 })).rejects.toThrow(/is paused.*kept/);
          expect((await dockerLeftovers.find()).map((l) => l.what)).not.toContain(
            (await listDockerContainers()).find((c) => container.startsWith(c.id))?.name,
          );
          const reaped = await reapDockerContainers();
          expect(reaped.filter((c) => container.startsWith(c.id))).toEqual([]);
          expect(exists(container)).toBe(true);
        } finally {
          docker("unpause", container);
        }
        expect((await env.execute("echo [$BEFORE] $(pwd)")).output).toBe("[kept] /usr\n");
      },
    );

    it("fails a call interrupted while its container is paused, and kills its command before the next call", async () => {
      const { env, container } = await session({ fastPath: false });
      await env.execute("export BEFORE=kept");
      const controller = new AbortController();
      try {
        const error = await env
          .execute("echo started; sleep 306", {
            signal: controller.signal,
            onOutput: (text) => {
              if (!text.includes("started")) return;
              docker("pause", container);
              controller.abort();
            },
          })
          .then(
            (result) => result,
            (caught: unknown) => caught,
          );
        expect(error).toBeInstanceOf(BackendUnavailableError);
        expect((error as Error).message).toMatch(/is paused, so the stopped command could not be killed/);
      } finally {
        docker("unpause", container);
      }
      expect((await env.execute("echo [$BEFORE]")).output).toBe("[kept]\n");
      expect(docker("exec", container, "ps", "-eo", "args=")).not.toContain("sleep 306");
    });

    it("does not recreate a kept container: it says it is gone, every time", async () => {
      const name = `sw-test-kept-${process.pid}`;
      leftovers.push(name);
      const { env } = await session({ containerName: name });
      docker("kill", name);
      await expect(env.execute("true")).rejects.toThrow(/is gone: .*not recreated/);
      await expect(env.execute("true")).rejects.toThrow(/not recreated/);
    });
  });

  describe("a read-only root filesystem", () => {
    it("fails the open with what to add, and leaves no container behind", async () => {
      const name = `sw-test-ro-${process.pid}`;
      leftovers.push(name);
      const opened = createEnvironment({
        backend: "docker",
        image,
        network: false,
        containerName: name,
        keepContainer: false,
        extraArgs: ["--read-only"],
      });
      const error = await opened.then(
        (env) => {
          open.push(env);
          return undefined;
        },
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(BackendUnavailableError);
      expect((error as Error).message).toMatch(/read-only root filesystem.*\/tmp is not writable.*--tmpfs/);
      expect(exists(name)).toBe(false);
    });

    it("runs with the writable /tmp the message names", async () => {
      const { env } = await session({ extraArgs: ["--read-only", "--tmpfs", "/tmp:exec"] });
      await env.execute("export KEPT=1; cd /");
      expect(await env.execute("echo [$KEPT] $(pwd); touch /etc/x")).toMatchObject({
        output: expect.stringMatching(/^\[1\] \/\n.*Read-only file system/),
      });
    });
  });

  describe("lifecycle", () => {
    it("removes its container on close, or keeps it with keepContainer", async () => {
      const { env, container } = await session();
      await env.close();
      expect(exists(container)).toBe(false);

      const kept = await session({ keepContainer: true });
      await kept.env.execute("sleep 300 &");
      await kept.env.close();
      expect(inspect(kept.container).State.Running).toBe(true);
      // The container stays; what the session started does not (docs/guarantees.md, "Processes").
      expect(docker("exec", kept.container, "ps", "-eo", "args=")).not.toContain("sleep 300");
    });

    it("keepContainer: close() ends a call's unmarked background child, even after the helper died", async () => {
      const kept = await session({ keepContainer: true });
      // The helper starts after the session opens; until then calls take the plain path (its own exec).
      await eventually(
        async () => /^swmux/.test((await kept.env.execute("cat /proc/$PPID/comm")).output),
        "the fast path's helper",
      );
      // `env -i` drops the session's mark; its group (the call's job) is what is left to find it by.
      await kept.env.execute("( env -i bash -c 'echo $$ > /tmp/unmarked.pid; exec sleep 4999' ) & sleep 0.2");
      const child = docker("exec", kept.container, "cat", "/tmp/unmarked.pid").trim();
      // The helper adopted the child; it dies (a crash, an OOM kill), and the child is init's.
      const parent = docker("exec", kept.container, "sh", "-c", `cut -d' ' -f4 /proc/${child}/stat`).trim();
      expect(docker("exec", kept.container, "cat", `/proc/${parent}/comm`)).toMatch(/^swmux/);
      docker("exec", kept.container, "kill", "-KILL", parent);
      await kept.env.close();
      expect(inspect(kept.container).State.Running).toBe(true);
      expect(docker("exec", kept.container, "ps", "-eo", "pid=,args=")).not.toContain("sleep 4999");
    });

    it("reuses a named container, starting it when stopped", async () => {
      const name = `sw-test-reuse-${process.pid}`;
      leftovers.push(name);
      const first = await session({ containerName: name });
      await first.env.execute("echo kept > /root/mark");
      await first.env.close();
      docker("stop", "-t", "0", name);
      const second = await session({ containerName: name });
      expect(inspect(name).Id.startsWith(second.container)).toBe(true);
      expect(inspect(name).Id.startsWith(first.container)).toBe(true);
      expect((await second.env.execute("cat /root/mark")).output).toBe("kept\n");
    });

    it("fails clearly on an image that does not exist, leaving no container behind", async () => {
      await expect(createEnvironment({ backend: "docker", image: "shellwright-no-such-image:never" })).rejects.toThrow(
        /docker run failed.*shellwright-no-such-image/s,
      );
      expect(docker("ps", "-a", "--format", "{{.Image}}")).not.toContain("shellwright-no-such-image");
    });

    it("fails clearly when the engine is not reachable", async () => {
      const error = await createEnvironment({ backend: "docker", image, socketPath: "/nonexistent/docker.sock" }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(BackendUnavailableError);
      expect((error as Error).message).toContain("/nonexistent/docker.sock");
    });

    it("runs a command longer than one argv string may be", async () => {
      const { env } = await session();
      const long = "y".repeat(300_000);
      const result = await env.execute(`v=${long}; echo \${#v}; export LONG_DONE=1`);
      expect(result).toMatchObject({ exitCode: 0, output: "300000\n" });
      expect((await env.execute("echo $LONG_DONE; ls /tmp | grep -c shellwright-script || true")).output).toBe(
        "1\n0\n",
      );
      // Staged the same way, it is still killed inside the container on a timeout.
      const timedOut = await env.execute(`v=${long}; sleep 304`, { timeoutMs: 1500 });
      expect(timedOut.exitCode).toBe(124);
      expect((await env.execute("ps -eo args= | grep -c '^sleep 304' || true")).output).toBe("0\n");
    });
  });

  describe("listing and reaping by label", () => {
    it("lists shellwright containers, reaps leftovers, and never touches others", async () => {
      const kept = await session({ keepContainer: true });
      const live = await session();
      // Leftovers as a crashed process leaves them: running or created with a dead owner, and stopped. A container
      // created by a live owner is a session starting (docker run creates, then starts): it stays.
      const orphan = `sw-test-orphan-${process.pid}`;
      const unstarted = `sw-test-unstarted-${process.pid}`;
      const stopped = `sw-test-stopped-${process.pid}`;
      const starting = `sw-test-starting-${process.pid}`;
      const stranger = `sw-test-stranger-${process.pid}`;
      leftovers.push(orphan, unstarted, stopped, starting, stranger);
      const labels = (owner: string): string[] => [
        "--label",
        "shellwright=1",
        "--label",
        "shellwright.keep=0",
        "--label",
        `shellwright.owner=${owner}`,
      ];
      docker("run", "-d", "--name", orphan, ...labels(`${hostname()}/999999999`), image, "sleep", "infinity");
      docker("create", "--name", unstarted, ...labels(`${hostname()}/999999999`), image, "true");
      docker("run", "--name", stopped, ...labels(`${hostname()}/${process.pid}`), image, "true");
      docker("create", "--name", starting, ...labels(`${hostname()}/${process.pid}`), image, "sleep", "infinity");
      docker("run", "-d", "--name", stranger, image, "sleep", "infinity");

      const listed = await listDockerContainers();
      const byName = new Map(listed.map((c) => [c.name, c]));
      expect(byName.get(orphan)).toMatchObject({ state: "running", keep: false, owner: `${hostname()}/999999999` });
      expect(byName.get(stopped)).toMatchObject({ state: "exited" });
      expect(byName.get(starting)).toMatchObject({ state: "created" });
      expect(listed.find((c) => c.id.startsWith(kept.container))).toMatchObject({
        keep: true,
        state: "running",
        owner: `${hostname()}/${process.pid}`,
      });
      expect(listed.some((c) => c.id.startsWith(live.container))).toBe(true);
      expect(byName.has(stranger)).toBe(false);

      const reaped = (await reapDockerContainers()).map((c) => c.name);
      expect(reaped).toEqual(expect.arrayContaining([orphan, unstarted, stopped]));
      expect(reaped).not.toContain(starting);
      expect(exists(orphan)).toBe(false);
      expect(exists(unstarted)).toBe(false);
      expect(exists(stopped)).toBe(false);
      expect(exists(starting)).toBe(true);
      // A live session's container, a kept one and a stranger all stay.
      expect(exists(live.container)).toBe(true);
      expect(exists(kept.container)).toBe(true);
      expect(exists(stranger)).toBe(true);
      expect((await live.env.execute("echo still-here")).output).toBe("still-here\n");

      expect(await removeDockerContainers([stranger])).toEqual([]);
      expect(exists(stranger)).toBe(true);
      const keptName = listed.find((c) => c.id.startsWith(kept.container))!.name;
      expect(await removeDockerContainers([keptName])).toEqual([keptName]);
      expect(exists(kept.container)).toBe(false);
    });
  });
});
