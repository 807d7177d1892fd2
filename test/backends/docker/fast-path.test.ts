/**
 * The docker fast path against a real Docker Engine (SHELLWRIGHT_TEST_DOCKER=1):
 * the static helper copied into the container, one long-lived exec
 * (docs/fast-path.md, "Docker"). The compat suite runs the whole contract
 * with it on (`docker`) and off (`docker-plain`); these are its own failure modes.
 */

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { BackendUnavailableError, InvalidOptionError } from "../../../src/core/errors.js";
import type { Session } from "../../../src/core/session.js";
import { createEnvironment } from "../../../src/index.js";
import { normalizeDockerConfig } from "../../../src/backends/docker/config.js";
import { GIVE_UP_AFTER_MS } from "../../../src/backends/shared/fast-path/helper-client.js";
import {
  HELPER_PID,
  LAUNCHER_PID,
  expectHelperDeathKeepsState,
  expectOneLauncherKeepingState,
  expectPlainWhenOff,
  expectStoppedCallsCommitNothing,
} from "../../helpers/fast-path-pids.js";
import { noStaticHelper, skipAllUnless } from "../../helpers/native-helper.js";
import { eventually } from "../../helpers/processes.js";
import { DOCKER_TEST_IMAGE as image, DOCKER_TEST_ENABLED as enabled } from "../../helpers/docker-test.js";
import { transportSessions } from "../../helpers/transport-session.js";

const openTransportSession = transportSessions();

async function openSession(options: Record<string, unknown> = {}) {
  const opened = await openTransportSession("docker", options);
  await opened.transport.fastPathRunner?.whenReady();
  return opened;
}

function docker(...args: string[]): string {
  return execFileSync("docker", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
}

describe("docker fastPath option", () => {
  it("is validated and on by default", () => {
    expect(() => normalizeDockerConfig({ image: "x", fastPath: "yes" }, () => undefined)).toThrow(InvalidOptionError);
    expect(() => normalizeDockerConfig({ image: "x", fastPath: "yes" }, () => undefined)).toThrow(
      /fastPath must be a boolean, got "yes"/,
    );
    expect(normalizeDockerConfig({ image: "x" }, () => undefined).fastPath).toBe(true);
    expect(normalizeDockerConfig({ image: "x", fastPath: false }, () => undefined).fastPath).toBe(false);
  });
});

describe.skipIf(!enabled)("docker fast path (real engine)", () => {
  skipAllUnless(noStaticHelper);
  it("runs calls in one launcher inside the container and keeps their state", async () => {
    const { session, transport } = await openSession();
    expect(transport.fastPathRunner?.ready).toBe(true);
    await expectOneLauncherKeepingState(session);
  });

  it("false runs every call as its own exec", () => expectPlainWhenOff(openSession));

  it("survives its helper being killed inside the container: the next calls work, the state is kept", async () => {
    const { session, transport } = await openSession();
    await expectHelperDeathKeepsState(
      session,
      () => transport.fastPathRunner!,
      (helper) => docker("exec", transport.containerId, "kill", "-9", helper),
    );
  });

  it("keeps the session of a paused container: the call fails retryably, the helper and the state are there after", async () => {
    const { session, transport } = await openSession();
    await session.execute("export KEPT=before; cd /");
    const helper = (await session.execute(HELPER_PID)).output.trim();
    const warnings: string[] = [];
    const onWarning = (warning: Error & { code?: string }): void =>
      void warnings.push(`${warning.code}: ${warning.message}`);
    process.on("warning", onWarning);
    docker("pause", transport.containerId);
    try {
      // A frozen helper cannot answer: the call runs to its timeout, whose kill the engine refuses. The timeout is
      // past the watchdog's give-up: a helper frozen with its container is waited for, not given up as stuck.
      const error = await session.execute("sleep 304", { timeoutMs: GIVE_UP_AFTER_MS + 2000 }).then(
        (result) => result,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(BackendUnavailableError);
      expect((error as Error).message).toMatch(/is paused, so the stopped command could not be killed.*docker unpause/);
    } finally {
      docker("unpause", transport.containerId);
      process.off("warning", onWarning);
    }
    expect(warnings.filter((warning) => warning.startsWith("SHELLWRIGHT_FAST_PATH"))).toEqual([]);
    expect(await session.execute("echo $KEPT; pwd")).toMatchObject({ exitCode: 0, output: "before\n/\n" });
    // The stopped call's command was killed before that call ran.
    expect(docker("exec", transport.containerId, "ps", "-eo", "args=")).not.toContain("sleep 304");
    // The same container and, once ready again, the same helper.
    await transport.fastPathRunner!.whenReady();
    expect((await session.execute(HELPER_PID)).output.trim()).toBe(helper);
  });

  it("never shows a chatty background job's output in a later call, nor waits for it", async () => {
    const { session } = await openSession();
    const first = await session.execute("while :; do echo x; done & echo started");
    // The job may print before or after "started": only later calls must never see it.
    expect(first.output.split("\n")).toContain("started");
    for (let i = 0; i < 5; i++) expect(await session.execute(`echo own-${i}`)).toMatchObject({ output: `own-${i}\n` });
  });

  it("says 124 and 130 like the plain path, and a stopped call commits nothing", async () => {
    const { session } = await openSession();
    await expectStoppedCallsCommitNothing(session, "/root", 500);
    // Nothing of the stopped calls is left in the container.
    expect((await session.execute("ps -eo args | grep -c '^sleep 30' || true")).output).toBe("0\n");
  });

  it("streams large output completely and passes stdin byte for byte", async () => {
    const { session } = await openSession();
    let bytes = 0;
    const r = await session.execute("head -c 20000000 /dev/zero", { onOutput: (text) => (bytes += text.length) });
    expect(r.exitCode).toBe(0);
    expect(bytes).toBe(20_000_000);
    const stdin = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256));
    expect((await session.execute("od -An -tx1 | tr -d ' \\n' | md5sum", { stdin })).output).toBe(
      `${createHash("md5").update(stdin.toString("hex")).digest("hex")}  -\n`,
    );
  });

  it("leaves neither its helper nor its copy of it in a kept container", async () => {
    const name = `sw-test-fast-kept-${process.pid}`;
    try {
      const { session, transport } = await openSession({ containerName: name, keepContainer: true });
      const helper = (await session.execute(HELPER_PID)).output.trim();
      await session.execute("sleep 300 &");
      await session.close();
      const processes = docker("exec", name, "ps", "-eo", "pid=,args=");
      expect(processes).not.toContain("sleep 300");
      expect(processes).not.toContain("swmux");
      expect(processes).not.toMatch(new RegExp(`^\\s*${helper}\\s`, "m"));
      expect(docker("exec", name, "ls", "-a", "/tmp")).not.toContain("swmux");
      expect(transport.fastPathRunner).toBeUndefined();
    } finally {
      docker("rm", "-f", name);
    }
  });

  it("keeps one copy of its helper across rollbacks: helperPath() names it, the restarted helper runs it, close removes it", async () => {
    const name = `sw-test-fast-copies-${process.pid}`;
    const copies = (): string[] =>
      docker("exec", name, "sh", "-c", "LC_ALL=C ls -d /tmp/*swmux* 2>/dev/null || true").split("\n").filter(Boolean);
    try {
      const env = (await createEnvironment({
        backend: "docker",
        image,
        network: false,
        containerName: name,
        keepContainer: true,
      })) as Session;
      const path = await env.helperPath!();
      const checkpoint = await env.checkpoint();
      for (let i = 0; i < 2; i++) {
        await env.rollback(checkpoint);
        // The next call starts the fast path afresh (the plain path runs it meanwhile); its helper is then running.
        await env.execute("true");
        expect(await env.whenFastPathReady()).toBe(true);
        // The helper's argv[0] (its /proc/PID/exe is not readable: it is not dumpable).
        expect((await env.execute("tr '\\0' '\\n' < /proc/$PPID/cmdline | head -n1")).output.trim()).toBe(path);
      }
      // The one copy, and the running helper's own work directory (swmux.XXXXXX): none left by the helpers before it.
      const [copy, work, ...more] = copies();
      expect({ copy, more }).toEqual({ copy: path.slice(0, path.lastIndexOf("/")), more: [] });
      expect(work).toMatch(/^\/tmp\/swmux\.\w{6}$/);
      expect(await env.helperPath!()).toBe(path);
      await env.close();
      expect(copies()).toEqual([]);
    } finally {
      docker("rm", "-f", name);
    }
  });

  it("reports a container killed under a fast call as gone, then runs fast again in the new one, from its own copy", async () => {
    const { session, transport } = await openSession();
    const oldCopy = await session.helperPath();
    await session.execute("export BEFORE=1");
    const running = session.execute("sleep 30", { timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const old = transport.containerId;
    docker("kill", old);
    await expect(running).rejects.toBeInstanceOf(BackendUnavailableError);
    expect((await session.execute("echo [${BEFORE-unset}]")).output).toBe("[unset]\n");
    expect(transport.containerId).not.toBe(old);
    docker("rm", "-f", old);
    await eventually(() => transport.fastPathRunner!.ready);
    await session.execute("export AFTER=2");
    const pid = (await session.execute(LAUNCHER_PID)).output;
    expect(await session.execute(`echo $AFTER; ${LAUNCHER_PID}`)).toMatchObject({ output: `2\n${pid}` });
    // The session's helper is the new container's copy, the one its helper runs (the PTY tool uses it).
    const copy = await session.helperPath();
    expect(copy).not.toBe(oldCopy);
    expect((await session.execute("tr '\\0' '\\n' < /proc/$PPID/cmdline | head -n1")).output.trim()).toBe(copy);
  });

  it("lets the process exit at once when a resumed session closes while its helper is still being copied in", () => {
    // In a process of its own, as a CLI uses it: a copy left streaming into the removed
    // container kept Node alive for about two minutes after close().
    const name = `sw-test-fast-resume-${process.pid}`;
    const dist = new URL("../../../dist/index.js", import.meta.url).href;
    const script = [
      `import { createEnvironment } from ${JSON.stringify(dist)};`,
      `const base = { backend: "docker", image: ${JSON.stringify(image)}, network: false, containerName: ${JSON.stringify(name)}, keepContainer: true };`,
      "const first = await createEnvironment(base);",
      "await first.execute('export A=1');",
      "const state = first.state();",
      "await first.close();",
      "const again = await createEnvironment({ ...base, keepContainer: false, resume: state });",
      "await again.close();",
      "console.log('closed');",
    ].join("\n");
    try {
      const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
        encoding: "utf8",
        timeout: 45_000,
      });
      expect(out).toBe("closed\n");
    } finally {
      execFileSync("docker", ["rm", "-f", name], { stdio: "ignore" });
    }
  });

  it("falls back to the plain path when the helper cannot run (a noexec temp dir)", async () => {
    const { session, transport } = await openSession({ extraArgs: ["--tmpfs", "/tmp:noexec"] });
    expect(transport.fastPathRunner?.ready).toBe(false);
    await session.execute("export KEPT=1; cd /");
    expect(await session.execute("echo $KEPT; pwd")).toMatchObject({ exitCode: 0, output: "1\n/\n" });
  });
});
