/**
 * The ssh fast path against the real test sshd (docs/fast-path.md, "SSH"):
 * the helper copied to the host and run on one channel over the master. The
 * compat suite runs the whole contract with it on (`ssh`) and off
 * (`ssh-plain`); these are the fast path's own failure modes on ssh.
 */

import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { InvalidOptionError } from "../../../src/core/errors.js";
import { normalizeSshConfig } from "../../../src/backends/ssh/config.js";
import { helperRemoteCommand, installWorked, parseProbe } from "../../../src/backends/ssh/fast-path-commands.js";
import { sshTestConfig, sshTestEnabled } from "./ssh-env.js";
import { transportSessions, type TransportSession } from "../../helpers/transport-session.js";
import { expectOneLauncherKeepingState, expectPlainWhenOff } from "../../helpers/fast-path-pids.js";
import { noStaticHelper, skipAllUnless } from "../../helpers/native-helper.js";
import { alive, eventually } from "../../helpers/processes.js";

const run = promisify(execFile);
const openTransportSession = transportSessions();

async function openSession(options: Record<string, unknown> = {}) {
  const opened = await openTransportSession("ssh", options, 20_000);
  const { session, transport } = opened;
  // The helper is copied in the background; the first calls may take the plain path.
  await eventually(async () => {
    await session.execute("true");
    return (await transport.fastPathRunner?.whenReady()) === true || transport.fastPath === undefined;
    // The copy and the first start are ssh round trips: on a loaded machine they take seconds.
  });
  return opened;
}

/** A plain command on the host over the session's master, beside the helper's channel. */
async function onHost(transport: TransportSession<"ssh">["transport"], command: string): Promise<string> {
  const c = sshTestConfig();
  const { stdout } = await run("ssh", [
    "-o",
    `ControlPath=${transport.controlPath}`,
    "-p",
    String(c.port),
    "-l",
    c.user!,
    c.host,
    command,
  ]);
  return stdout;
}

describe("ssh fastPath option", () => {
  it("is validated", () => {
    const base = { host: "example.org" };
    expect(() => normalizeSshConfig({ ...base, fastPath: "yes" }, () => undefined)).toThrow(InvalidOptionError);
    expect(() => normalizeSshConfig({ ...base, fastPath: "yes" }, () => undefined)).toThrow(
      /fastPath must be true or false, got "yes"/,
    );
    expect(normalizeSshConfig({ ...base, fastPath: false }, () => undefined).fastPath).toBe(false);
  });
});

describe("ssh fast path commands", () => {
  it("reads the host's machine, bash and whether the helper is there", () => {
    expect(parseProbe("aarch64\n/usr/bin/bash\nmissing\n")).toEqual({
      machine: "aarch64",
      bash: "/usr/bin/bash",
      present: false,
    });
    expect(parseProbe("x86_64\n/bin/bash\nhave\n")?.present).toBe(true);
    expect(parseProbe("x86_64\n")).toBeUndefined();
  });

  it("accepts the copy only when the helper ran and gave its usage exit", () => {
    expect(installWorked("rc=2\n")).toBe(true);
    expect(installWorked("rc=126\n")).toBe(false);
    expect(installWorked("")).toBe(false);
  });

  it("runs the helper with a clean environment and the session mark, every word quoted", () => {
    const command = helperRemoteCommand({
      helper: "/tmp/d x/swmux-1",
      bash: "/bin/bash",
      snapshot: "/tmp/d x/snap",
      workDir: "/tmp/d x",
      sessionMark: "m1",
      groupsFile: "/tmp/d x/groups",
    });
    expect(command).toContain(`echo "$$" >> '/tmp/d x/groups'`);
    expect(command).toContain(`exec 'env' '-i' 'SHLVL=1' 'SHELLWRIGHT_SESSION=m1' '/tmp/d x/swmux-1' '/tmp/d x/snap'`);
  });
});

describe.skipIf(!sshTestEnabled)("ssh fast path", () => {
  skipAllUnless(noStaticHelper);
  it("runs calls in one launcher on the host and keeps the state a call changes", async () => {
    const { session } = await openSession();
    await expectOneLauncherKeepingState(session);
  });

  it("false runs every call as its own ssh command", () => expectPlainWhenOff(openSession));

  it("falls back to the plain path when the helper cannot run on the host", async () => {
    const { session, transport } = await openSession({ fastPathHelper: "/etc/hostname" });
    expect(transport.fastPath).toBeUndefined();
    await session.execute("export KEPT=1; cd /");
    expect(await session.execute("echo $KEPT; pwd")).toMatchObject({ exitCode: 0, output: "1\n/\n" });
  });

  it("survives its helper being killed on the host: the next calls work, the state is kept", async () => {
    const { session, transport } = await openSession();
    await session.execute("export KEPT=before; cd /");
    const helper = transport.fastPathHelperPid!;
    expect(helper).toBeGreaterThan(1);
    await onHost(transport, `kill -9 ${helper}`);
    // Not `running === false`: under load the restart (200 ms later) can come between two polls.
    await eventually(() => transport.fastPathHelperPid !== helper);
    expect(await session.execute("echo $KEPT; pwd")).toMatchObject({ exitCode: 0, output: "before\n/\n" });
    await eventually(async () => (await transport.fastPathRunner!.whenReady()) === true);
    expect(transport.fastPathHelperPid).not.toBe(helper);
    expect(await session.execute("export KEPT=after; echo $KEPT")).toMatchObject({ output: "after\n" });
    expect((await session.execute("echo $KEPT; pwd")).output).toBe("after\n/\n");
  });

  it("a chatty background job does not reach later calls", async () => {
    const { session } = await openSession();
    const r = await session.execute("(while :; do echo chatter; done) & echo started");
    expect(r.output.startsWith("started\n") || r.output.includes("started")).toBe(true);
    for (let i = 0; i < 3; i++) expect((await session.execute(`echo call-${i}`)).output).toBe(`call-${i}\n`);
  });

  it("a timeout is 124 and an interrupt 130, and neither commits anything", async () => {
    const { session } = await openSession();
    await session.execute("cd /tmp && export T=kept");
    const timedOut = await session.execute("export T=leaked; cd /; sleep 30", { timeoutMs: 1000 });
    expect(timedOut).toMatchObject({ exitCode: 124, timedOut: true });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 1000);
    const interrupted = await session.execute("export T=leaked; cd /; sleep 30", { signal: controller.signal });
    expect(interrupted).toMatchObject({ exitCode: 130, interrupted: true });
    expect(await session.execute('echo "$T $PWD"')).toMatchObject({ output: "kept /tmp\n", cwd: "/tmp" });
  });

  it("a named session records the helper's group and each job's group:session on the host as they start", async () => {
    const dir = `/tmp/sw-fp-named-${process.pid}-${Date.now()}`;
    try {
      const { session, transport } = await openSession({ remoteTempDir: dir });
      const group = (await session.execute("read -r s < /proc/$BASHPID/stat; s=${s##*) }; set -- $s; echo $3:$4"))
        .output;
      const recorded = (await onHost(transport, `cat ${dir}/groups`)).split("\n");
      expect(recorded).toContain(group.trim());
      expect(recorded).toContain(String(transport.fastPathHelperPid));
      await session.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("close() ends the helper and the jobs on the host", async () => {
    const { session, transport } = await openSession();
    const helper = transport.fastPathHelperPid!;
    const bg = Number((await session.execute("sleep 300 >/dev/null 2>&1 & echo $!")).output);
    expect(alive(helper) && alive(bg)).toBe(true);
    await session.close();
    await eventually(() => !alive(helper) && !alive(bg));
  });
});
