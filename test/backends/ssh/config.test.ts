/**
 * The SSH backend's pieces that need no server: config validation, and the
 * remote command lines, run here by a real local shell (the same way sshd
 * runs them) to check their quoting and the group/exit lines.
 */

import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { normalizeSshConfig } from "../../../src/backends/ssh/config.js";
import {
  EXIT_PATTERN,
  GROUP_PATTERN,
  killScript,
  sshArgs,
  wrapScript,
  type SshTarget,
} from "../../../src/backends/ssh/command.js";
import { InvalidOptionError, createEnvironment } from "../../../src/index.js";

const warn = (): void => undefined;

function rejects(raw: Record<string, unknown>, option: string, text: string | RegExp): void {
  let error: unknown;
  try {
    normalizeSshConfig(raw, warn);
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(InvalidOptionError);
  expect((error as InvalidOptionError).option).toBe(option);
  expect((error as InvalidOptionError).message).toMatch(text);
}

describe("ssh config", () => {
  it("applies defaults", () => {
    const options = normalizeSshConfig({ host: "example.org" }, warn);
    expect(options).toMatchObject({
      host: "example.org",
      user: undefined,
      port: undefined,
      strictHostKeyChecking: "accept-new",
      sshOptions: [],
      connectTimeoutMs: 10_000,
      controlPersistSeconds: 300,
      env: {},
      sync: undefined,
      sshPath: "ssh",
      rsyncPath: "rsync",
    });
  });

  it("names the option and the value in every error", () => {
    rejects({}, "host", "must be a string");
    rejects({ host: "a b" }, "host", /no spaces.*"a b"/);
    rejects({ host: "-oProxyCommand=x" }, "host", "leading");
    rejects({ host: "h", user: "-x" }, "user", "leading");
    rejects({ host: "h", port: 0 }, "port", /1 to 65535, got 0/);
    rejects({ host: "h", port: "22" }, "port", /got "22"/);
    rejects({ host: "h", strictHostKeyChecking: "ask" }, "strictHostKeyChecking", /"ask"/);
    rejects({ host: "h", sshOptions: "Compression=yes" }, "sshOptions", "array");
    rejects({ host: "h", sshOptions: ["nonsense"] }, "sshOptions[0]", /Key=Value.*"nonsense"/);
    rejects({ host: "h", sshOptions: ["ControlPath=/tmp/x"] }, "sshOptions[0]", "manages itself");
    rejects({ host: "h", sshOptions: ["batchmode=no"] }, "sshOptions[0]", "manages itself");
    rejects({ host: "h", connectTimeoutMs: -5 }, "connectTimeoutMs", "-5");
    rejects({ host: "h", env: { "BAD-NAME": "x" } }, "env", "BAD-NAME");
    rejects({ host: "h", remoteTempDir: "relative/dir" }, "remoteTempDir", "absolute");
    rejects({ host: "h", sync: { files: [{ local: "a" }] } }, "sync.files[0].remote", "must be a string");
  });

  it("refuses a keyPath that does not exist before connecting, naming the option and the path", async () => {
    rejects({ host: "h", keyPath: "/nonexistent/id_ed25519" }, "keyPath", /"\/nonexistent\/id_ed25519" does not exist/);
    rejects({ host: "h", keyPath: "~/no-such-key-here" }, "keyPath", /"~\/no-such-key-here" does not exist/);
    rejects({ host: "h", keyPath: "/tmp" }, "keyPath", /"\/tmp" is a directory/);
    // Refused by validation, never by a connection attempt: an unroutable host would hang for the timeout.
    await expect(
      createEnvironment({ backend: "ssh", host: "192.0.2.1", keyPath: "/nonexistent/key", connectTimeoutMs: 60_000 }),
    ).rejects.toThrow(/keyPath.*does not exist/);
  });

  it("rejects unknown and removed options before connecting", async () => {
    await expect(createEnvironment({ backend: "ssh", host: "h", hostname: "x" } as never)).rejects.toThrow(
      /Unknown ssh backend option "hostname"/,
    );
    await expect(createEnvironment({ backend: "ssh", host: "h", persistent: true } as never)).rejects.toThrow(
      /persistent/,
    );
  });
});

const target: SshTarget = {
  host: "example.org",
  user: "agent",
  port: 2222,
  keyPath: "/keys/id ed25519",
  knownHostsFile: undefined,
  strictHostKeyChecking: "accept-new",
  connectTimeoutMs: 10_000,
  sshOptions: ["Compression=yes"],
  controlPath: "/tmp/shellwright-ssh-x/master",
  controlPersistSeconds: 300,
};

describe("ssh command lines", () => {
  it("puts the master, no prompts and the user's options in the argv, the host last but the command", () => {
    const args = sshArgs(target, "true");
    expect(args.slice(-3)).toEqual(["-T", "example.org", "true"]);
    const joined = args.join(" ");
    for (const part of [
      "ControlPath=/tmp/shellwright-ssh-x/master",
      "ControlMaster=auto",
      "ControlPersist=300",
      "BatchMode=yes",
      "-p 2222",
      "-l agent",
      "IdentitiesOnly=yes",
      "-o Compression=yes",
    ]) {
      expect(joined).toContain(part);
    }
    expect(args[args.indexOf("-i") + 1]).toBe("/keys/id ed25519");
  });

  /**
   * Runs a remote command line the way sshd does: `$SHELL -c LINE`, stdin not
   * a socket (Debian's bash sources ~/.bashrc when stdin is one).
   */
  function runLine(line: string) {
    const result = spawnSync("bash", ["-c", line], { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
    return { stdout: result.stdout, stderr: result.stderr };
  }

  it("wraps a script so the shell reports its group first and the exit code last, on stderr", () => {
    const script = `exec 2>&1; printf '%s\\n' "it's \\"quoted\\" \\$x"; echo "[\${HOME-unset}]"; exit 3`;
    const clean = runLine(wrapScript(script, { cleanEnv: true }));
    expect(clean.stdout).toBe(`it's "quoted" $x\n[unset]\n`);
    const lines = clean.stderr.trim().split("\n");
    expect(lines[0]).toMatch(GROUP_PATTERN);
    expect(EXIT_PATTERN.exec(lines[1]!)?.[1]).toBe("3");
  });

  it("sources the env file for a shell that does not start clean, and reads a script file", async () => {
    const { mkdtemp, writeFile, rm, access } = await import("node:fs/promises");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = await mkdtemp(join(tmpdir(), "sw-wrap-"));
    try {
      await writeFile(join(dir, "env"), "export SW_FROM_FILE='a b'\\''c'\n", { mode: 0o600 });
      const viaEnv = runLine(wrapScript('echo "$SW_FROM_FILE|$0"', { cleanEnv: false, envFile: join(dir, "env") }));
      expect(viaEnv.stdout).toBe("a b'c|bash\n");
      await writeFile(join(dir, "script.sh"), "echo from-file; exit 4");
      const viaFile = runLine(wrapScript("ignored", { cleanEnv: true, scriptFile: join(dir, "script.sh") }));
      expect(viaFile.stdout).toBe("from-file\n");
      expect(EXIT_PATTERN.exec(viaFile.stderr)?.[1]).toBe("4");
      await expect(access(join(dir, "script.sh"))).rejects.toThrow(); // removed after the run
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("builds a kill script that takes the call's group, session, wrapper and mark", () => {
    const script = killScript({ group: 123, pid: 456, mark: "SHELLWRIGHT_CALL=abc" }, "TERM");
    expect(script).toContain("marks=(SHELLWRIGHT_CALL=abc)");
    expect(script).toContain('root=456 groups=" 123 " sessions=" 123 "');
    // The wrapper gets KILL first, whatever the signal: its EXIT trap must not commit a stopped call.
    expect(script).toContain('kill -s KILL "$root"');
    const unknownGroup = killScript({ group: undefined, pid: 456 }, "KILL");
    expect(unknownGroup).toContain("root=456");
    // bash and /proc only: no ps, pkill or grep needed.
    expect(spawnSync("bash", ["-n", "-c", unknownGroup]).status).toBe(0);
    expect(spawnSync("bash", ["-n", "-c", script]).status).toBe(0);
  });
});
