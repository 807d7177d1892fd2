/**
 * The SSH backend against a real OpenSSH server on 127.0.0.1 (the compat
 * suite covers the session behaviour; this file covers what is SSH's own:
 * the master connection, quoting, remote cleanup, secrets, lost connections).
 */

import { execFile } from "node:child_process";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeSshConfig } from "../../../src/backends/ssh/config.js";
import { SshTransport } from "../../../src/backends/ssh/transport.js";
import { BackendUnavailableError, Session, createEnvironment, type SshConfig } from "../../../src/index.js";
import { PrivateSshd } from "./private-sshd.js";
import { sshTestConfig, sshTestEnabled } from "./ssh-env.js";
import { LAUNCHER_PID } from "../../helpers/fast-path-pids.js";
import { noStaticHelper, skipUnless } from "../../helpers/native-helper.js";
import { alive, eventually } from "../../helpers/processes.js";

const run = promisify(execFile);

async function openSsh(
  config: SshConfig,
  warnings: string[] = [],
): Promise<{ session: Session; transport: SshTransport }> {
  const warn = (message: string): void => void warnings.push(message);
  const transport = new SshTransport(normalizeSshConfig({ ...config }, warn));
  const session = await Session.open(transport, {
    cwd: "~",
    timeoutMs: 60_000,
    maxOutputBytes: 1_000_000,
    outputHeadFraction: 0.4,
    killGraceMs: 1000,
    initTimeoutMs: 30_000,
    warn,
  });
  return { session, transport };
}

/** Client-side TCP connections to `port` that are established, from /proc/net/tcp. */
function establishedTo(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .filter((line) => {
      const fields = line.trim().split(/\s+/);
      return fields[2]?.endsWith(`:${hexPort}`) && fields[3] === "01";
    }).length;
}

/** Every command line on this machine (the test sshd runs here too), NULs as spaces. */
function allCommandLines(): string[] {
  const lines: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      lines.push(readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " "));
    } catch {
      // exited meanwhile
    }
  }
  return lines;
}

/** Waits until the session's calls take the fast path (the helper is copied to the host in the background). */
async function fastPathReady(session: Session, transport: SshTransport): Promise<void> {
  for (let i = 0; i < 50 && (await transport.fastPathRunner?.whenReady()) !== true; i++)
    await session.execute("sleep 0.1");
  expect(await transport.fastPathRunner?.whenReady()).toBe(true);
  // The first fast call may restart the launcher once: the init's dump is not byte-for-byte the fast path's.
  await session.execute("true");
}

describe.skipIf(!sshTestEnabled)("ssh backend", () => {
  describe("on the shared test server", () => {
    let session: Session;
    let transport: SshTransport;

    beforeAll(async () => {
      ({ session, transport } = await openSsh(sshTestConfig()));
    });
    afterAll(async () => {
      await session?.close();
    });

    it("keeps the master socket in a private 0700 directory", () => {
      const dir = join(transport.controlPath, "..");
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(statSync(transport.controlPath).isSocket()).toBe(true);
    });

    it("runs awkward commands exactly", async () => {
      const cases: [string, string][] = [
        [`printf '%s\\n' "it's" 'say "hi"' "\\$HOME" 'back\\slash'`, `it's\nsay "hi"\n$HOME\nback\\slash\n`],
        ["echo a; echo b && echo c || echo d", "a\nb\nc\n"],
        ["printf '%s|' *.nomatch-$((1+1))", "*.nomatch-2|"],
        ["x='multi\nline'; printf '%s' \"$x\"", "multi\nline"],
        ["printf '%s' 'héllo wörld ✓ 🚀'", "héllo wörld ✓ 🚀"],
        ["cat <<'EOF'\n$NOT_EXPANDED `nor this`\nEOF", "$NOT_EXPANDED `nor this`\n"],
        ["echo -- -n --help", "-- -n --help\n"],
        ["printf '%s' \"\\\\'\"", "\\'"],
        ['echo "$(printf \'%s\' "nested \'quotes\' \\"here\\"")"', "nested 'quotes' \"here\"\n"],
        ["echo ~ | grep -c '^/'", "1\n"],
      ];
      for (const [command, expected] of cases) {
        const r = await session.execute(command);
        expect({ command, output: r.output, exitCode: r.exitCode }).toEqual({ command, output: expected, exitCode: 0 });
      }
    });

    it("runs a command longer than one argument may be, and cleans up after it", async () => {
      const payload = "x".repeat(150_000);
      const r = await session.execute(`v='${payload}'; echo \${#v}`);
      expect(r).toMatchObject({ exitCode: 0, output: "150000\n" });
      // 60 000 characters but 180 000 bytes: the limit is in bytes.
      const wide = await session.execute(`v='${"✓".repeat(60_000)}'; LC_ALL=C; echo \${#v}`);
      expect(wide).toMatchObject({ exitCode: 0, output: "180000\n" });
      const left = await session.execute(`ls ${transport.tempDir} | grep -c '^script-' || true`);
      expect(left.output).toBe("0\n");
    });

    it("a stopped call leaves no trace in the session, and prints nothing after the kill", async () => {
      for (let i = 0; i < 3; i++) {
        const r = await session.execute(`cd /; export SW_STOPPED=${i}; echo partial; sleep 30`, { timeoutMs: 3000 });
        expect(r).toMatchObject({ exitCode: 124, output: "partial\n\n[Command timed out after 3s]" });
      }
      expect((await session.execute('echo "${SW_STOPPED-unset}"')).output).toBe("unset\n");
    });

    it("an interrupt right after the start leaves nothing running on the host", async () => {
      for (const delayMs of [1, 20, 80]) {
        const marker = `sw-early-${delayMs}-${Date.now()}`;
        const controller = new AbortController();
        setTimeout(() => controller.abort(), delayMs);
        const r = await session.execute(`exec -a ${marker} sleep 300`, { signal: controller.signal });
        expect(r.exitCode).toBe(130);
        await new Promise((resolve) => setTimeout(resolve, 1500)); // a remote start still in flight would show by now
        expect(allCommandLines().filter((line) => line.startsWith(`${marker} `))).toEqual([]);
      }
      expect((await session.execute("echo usable")).output).toBe("usable\n");
    });

    it("reports exit codes, including a wrapper killed by a signal", async () => {
      expect((await session.execute("exit 7")).exitCode).toBe(7);
      // $BASHPID: the shell running the command on both paths.
      expect((await session.execute("kill -9 $BASHPID")).exitCode).toBe(137);
      expect((await session.execute("echo still fine")).output).toBe("still fine\n");
    });
  });

  // A stock server: sessions read ~/.bashrc, as most real hosts do.
  describe("on a private server", () => {
    let sshd: PrivateSshd;

    beforeAll(async () => {
      sshd = await PrivateSshd.start({ readBashrc: true });
    });
    afterAll(async () => {
      await sshd?.stop();
    });

    it("carries every command, parallel ones too, over one TCP connection", async () => {
      const port = Number(sshd.vars.SHELLWRIGHT_TEST_SSH_PORT);
      expect(establishedTo(port)).toBe(0);
      // The plain path's process tree (the fast path's calls descend from its helper: see the next test).
      const { session, transport } = await openSsh({ ...sshd.config(), fastPath: false });
      try {
        // The wrapper's grandparent is sshd's process for the connection.
        const connectionOf = async (): Promise<string> =>
          // The command's parent is the call's outer shell; the one above it is sshd's shell, whose parent is the connection.
          (await session.execute("read -r _ _ _ p _ < /proc/$PPID/stat; read -r _ _ _ c _ < /proc/$p/stat; echo $c"))
            .output;
        const first = await connectionOf();
        const sequential = [];
        for (let i = 0; i < 5; i++) sequential.push(await connectionOf());
        const parallel = await Promise.all(Array.from({ length: 8 }, connectionOf));
        expect(new Set([first, ...sequential, ...parallel]).size).toBe(1);
        expect(establishedTo(port)).toBe(1);
        const check = await run("ssh", ["-o", `ControlPath=${transport.controlPath}`, "-O", "check", "x"]).catch(
          (error: { stderr: string }) => error,
        );
        expect(check.stderr).toMatch(/Master running \(pid=\d+\)/);
      } finally {
        await session.close();
      }
      expect(establishedTo(port)).toBe(0);
    });

    it("runs the fast path's helper over the same one TCP connection", async (context) => {
      skipUnless(context, noStaticHelper);
      const port = Number(sshd.vars.SHELLWRIGHT_TEST_SSH_PORT);
      const { session, transport } = await openSsh(sshd.config());
      try {
        for (let i = 0; i < 50 && (await transport.fastPathRunner?.whenReady()) !== true; i++)
          await session.execute("sleep 0.1");
        expect(await transport.fastPathRunner?.whenReady()).toBe(true);
        // The first fast call may restart the launcher once: the init's dump is not byte-for-byte the fast path's.
        await session.execute("true");
        const pid = (await session.execute(LAUNCHER_PID)).output;
        await Promise.all(Array.from({ length: 8 }, () => session.execute(LAUNCHER_PID)));
        expect((await session.execute(LAUNCHER_PID)).output).toBe(pid);
        expect(establishedTo(port)).toBe(1);
      } finally {
        await session.close();
      }
      expect(establishedTo(port)).toBe(0);
    });

    it("sends env values in a private file, never on a command line", async () => {
      const secret = `tok-${Math.random().toString(36).slice(2)}-${Date.now()}`;
      const { session, transport } = await openSsh({ ...sshd.config(), env: { SW_SECRET_TOKEN: secret } });
      try {
        const seen: string[] = [];
        const running = session.execute("echo ready; sleep 2; echo ${#SW_SECRET_TOKEN}", {
          onOutput: (text) => {
            if (text.includes("ready")) seen.push(...allCommandLines().filter((line) => line.includes(secret)));
          },
        });
        expect((await running).output).toBe(`ready\n${secret.length}\n`);
        expect(seen).toEqual([]);
        expect((await session.execute(`stat -c %a ${transport.tempDir} ${transport.tempDir}/env`)).output).toBe(
          "700\n600\n",
        );
      } finally {
        await session.close();
      }
    });

    it("close() ends background jobs on the host and removes the session's files", async () => {
      const { session, transport } = await openSsh(sshd.config());
      // One job holds the channel open, the other does not (its client exits at once).
      const r = await session.execute("sleep 300 & echo $!; (sleep 301 >/dev/null 2>&1 & echo $!)");
      const pids = r.output.trim().split("\n").map(Number);
      expect(pids).toHaveLength(2);
      for (const pid of pids) expect(alive(pid)).toBe(true);
      const tempDir = transport.tempDir;
      const controlDir = join(transport.controlPath, "..");
      await session.close();
      for (const pid of pids) expect(alive(pid)).toBe(false);
      expect(() => statSync(tempDir)).toThrow();
      expect(() => statSync(controlDir)).toThrow();
    });

    it("a dropped connection is a typed error, and the next call reconnects", async () => {
      const { session } = await openSsh(sshd.config());
      try {
        await session.execute("export SW_KEPT=across-reconnect; cd /tmp");
        let restarted: Promise<unknown> | undefined;
        const failed = await session
          .execute("echo started; sleep 30", {
            onOutput: (text) => void (text.includes("started") && (restarted = sshd.restart())),
          })
          .catch((error: unknown) => error);
        await restarted;
        expect(failed).toBeInstanceOf(BackendUnavailableError);
        expect((failed as Error).message).toMatch(
          /SSH connection to .* was lost during the command.*next command reconnects/,
        );

        const again = await session.execute("echo $SW_KEPT; pwd");
        expect(again).toMatchObject({ exitCode: 0, output: "across-reconnect\n/tmp\n" });

        await sshd.down();
        const down = await session.execute("echo never").catch((error: unknown) => error);
        expect(down).toBeInstanceOf(BackendUnavailableError);
        expect((down as Error).message).toMatch(/Cannot reach .* over SSH.*Connection refused.*did not run/);
        await sshd.up();
        expect((await session.execute("echo back")).output).toBe("back\n");
      } finally {
        await session.close();
      }
    });

    for (const fastPath of [false, true])
      it(`a server restarted between calls: the next call reconnects and runs, its state kept (fastPath ${fastPath})`, async (context) => {
        if (fastPath) skipUnless(context, noStaticHelper);
        const { session, transport } = await openSsh({ ...sshd.config(), fastPath });
        try {
          if (fastPath) await fastPathReady(session, transport);
          await session.execute("export SW_KEPT=across-restart; cd /tmp");
          // Synchronously, as a caller that blocks would: the call below is sent before this process has seen
          // the fast path's channel end, to a helper that is provably gone (its ssh client exited before it).
          sshd.restartSync();
          expect(await session.execute("echo $SW_KEPT; pwd")).toMatchObject({
            exitCode: 0,
            output: "across-restart\n/tmp\n",
          });
          expect((await session.execute("echo again")).output).toBe("again\n");
        } finally {
          await session.close();
        }
      });

    it("a fast call the server may have received before a restart throws BackendUnavailableError, as a plain one does", async (context) => {
      skipUnless(context, noStaticHelper);
      const { session, transport } = await openSsh(sshd.config());
      try {
        await fastPathReady(session, transport);
        await session.execute("export SW_KEPT=across-restart");
        // Stopped, the helper (a process on this machine: the server is on loopback) leaves the request in a live
        // connection and never reports the job as started: whether it ran is unknown when the connection drops.
        const helper = transport.fastPathHelperPid!;
        process.kill(helper, "SIGSTOP");
        const runner = transport.fastPathRunner!;
        const sent = runner.requestsSent;
        const call = session.execute("echo ran").catch((error: unknown) => error);
        // Under load the restart once came before the request was written: provably never sent, the call then
        // (rightly) ran again on the plain path. Here it must have reached the connection.
        await eventually(() => runner.requestsSent > sent, "the request reached the helper's ssh client");
        await sshd.restart();
        const failed = await call;
        // Continued, it meets the hangup the restart sent it, and its end (unless the session's watchdog, which
        // takes a helper that stops answering as stuck, ended it already).
        try {
          process.kill(helper, "SIGCONT");
        } catch {
          // gone already
        }
        await eventually(() => !alive(helper), `the stopped helper ${helper} ends once continued`);
        expect(failed).toBeInstanceOf(BackendUnavailableError);
        expect((failed as Error).message).toMatch(
          /SSH connection to .* was lost during the command.*result is unknown.*next command reconnects/,
        );
        expect(await session.execute("echo $SW_KEPT")).toMatchObject({ exitCode: 0, output: "across-restart\n" });
      } finally {
        await session.close();
      }
    });

    it("a key the server refuses fails fast with a clear error, without prompting", async () => {
      const dir = await mkdtemp(join(tmpdir(), "sw-key-"));
      try {
        await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, "stranger")]);
        const error = await createEnvironment({ ...sshd.config(), keyPath: join(dir, "stranger") }).catch(
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(BackendUnavailableError);
        expect((error as Error).message).toMatch(/Permission denied.*refused the key/);

        await writeFile(join(dir, "known_hosts"), "");
        const unknownHost = await createEnvironment({
          ...sshd.config(),
          knownHostsFile: join(dir, "known_hosts"),
        }).catch((e: unknown) => e);
        expect(unknownHost).toBeInstanceOf(BackendUnavailableError);
        expect((unknownHost as Error).message).toMatch(/Host key verification failed.*host key is unknown or changed/);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });

  it("kills the remote tree, where killing the ssh client alone would not", async () => {
    // The control experiment: a plain ssh client killed locally leaves its remote command running.
    const config = sshTestConfig();
    const marker = `sw-orphan-${Date.now()}`;
    const args = [
      "-o",
      "BatchMode=yes",
      "-o",
      `UserKnownHostsFile=${config.knownHostsFile}`,
      "-i",
      config.keyPath!,
      "-p",
      String(config.port),
      `${config.user}@${config.host}`,
    ];
    const { spawn } = await import("node:child_process");
    const client = spawn("ssh", [...args, `exec -a ${marker} sleep 60`], { stdio: "ignore" });
    const find = (): number[] =>
      readdirSync("/proc")
        .filter((name) => /^\d+$/.test(name))
        .filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith(`${marker}\0`);
          } catch {
            return false;
          }
        })
        .map(Number);
    for (let i = 0; i < 400 && find().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const orphans = find();
    expect(orphans).toHaveLength(1);
    const clientGone = new Promise((resolve) => client.once("close", resolve));
    client.kill("SIGKILL");
    await clientGone;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(alive(orphans[0]!)).toBe(true);
    process.kill(orphans[0]!, "SIGKILL"); // ours to clean up

    // The backend: child and grandchild gone after a timeout (the compat suite checks the same on every backend).
    const { session } = await openSsh(config);
    try {
      // Stopped once both PIDs are out (a fixed timeout could fire before a loaded machine prints them).
      const controller = new AbortController();
      let printed = "";
      const r = await session.execute("(sleep 300 & echo $!; wait) & echo $!; wait", {
        signal: controller.signal,
        onOutput: (text) => {
          printed += text;
          if (printed.split("\n").filter((line) => /^\d+$/.test(line)).length === 2) controller.abort();
        },
      });
      expect(r.exitCode).toBe(130);
      const pids = r.output
        .split("\n")
        .filter((line) => /^\d+$/.test(line))
        .map(Number);
      expect(pids).toHaveLength(2);
      for (const pid of pids) expect(alive(pid)).toBe(false);
      expect((await session.execute("echo usable")).output).toBe("usable\n");
    } finally {
      await session.close();
    }
  });
});
