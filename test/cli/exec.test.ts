/** The built `shellwright` command, run as a user would run it. */

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sshTestConfig, sshTestEnabled } from "../backends/ssh/ssh-env.js";

import { bin, withoutFastPathWarning } from "../helpers/cli.js";
const home = mkdtempSync(join(tmpdir(), "sw-cli-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

function cli(args: string[], input?: string) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    env: { ...process.env, SHELLWRIGHT_HOME: home },
    input,
    stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: withoutFastPathWarning(result.stderr) };
}

describe("shellwright exec", () => {
  it("keeps cwd and exported variables in a named session across processes", () => {
    expect(cli(["exec", "--session", "s", "cd /tmp && export A=1"]).code).toBe(0);
    const second = cli(["exec", "--session", "s", "pwd; echo $A"]);
    expect(second).toMatchObject({ code: 0, stdout: "/tmp\n1\n" });
    expect(statSync(join(home, "sessions", "s")).mode & 0o777).toBe(0o700);
    expect(statSync(join(home, "sessions", "s", "state.json")).mode & 0o777).toBe(0o600);
  });

  it("passes piped stdin, exits with the command's code, and prints JSON on request", () => {
    expect(cli(["exec", "cat"], "piped data")).toMatchObject({ code: 0, stdout: "piped data" });
    expect(cli(["exec", "--", "exit", "7"]).code).toBe(7);
    const json = cli(["exec", "--json", "--cwd", "/", "pwd"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ output: "/\n", exitCode: 0, timedOut: false });
  });

  it("runs a command that starts with a dash as a command: `exec -- --json` is not found, 127", () => {
    const result = cli(["exec", "--", "--json"]);
    expect(result.code).toBe(127);
    expect(result.stdout).toMatch(/--json: command not found\n$/);
  });

  it("times out with 124, saying so on stderr", () => {
    const result = cli(["exec", "--timeout", "0.5", "echo before; sleep 10"]);
    expect(result).toMatchObject({
      code: 124,
      stdout: "before\n",
      stderr: "shellwright: [Command timed out after 0.5s]\n",
    });
  });

  it("prints all of a long output by default, and cuts it at --max-output-bytes saying so on stderr", () => {
    const command = "head -c 60000 /dev/zero | tr '\\0' a";
    const all = cli(["exec", command]);
    expect(all).toMatchObject({ code: 0, stdout: "a".repeat(60000), stderr: "" });
    for (const flag of [["--max-output-bytes", "100"], ["--max-output=100"]]) {
      const cut = cli(["exec", ...flag, command]);
      expect(cut).toMatchObject({ code: 0, stdout: "a".repeat(100) });
      expect(cut.stderr).toBe(
        "shellwright: output cut: printed the first 100 of 60000 bytes (--max-output-bytes raises the cap)\n",
      );
    }
    const json = cli(["exec", "--json", "--max-output-bytes", "100", command]);
    expect(JSON.parse(json.stdout)).toMatchObject({ truncated: true, exitCode: 0 });
    expect(json.stderr).toContain("output cut");
    expect(JSON.parse(cli(["exec", "--json", command]).stdout)).toMatchObject({ truncated: true });
    expect(JSON.parse(cli(["exec", "--json", "--max-output-bytes", "70000", command]).stdout)).toMatchObject({
      truncated: false,
      output: "a".repeat(60000),
    });
  });

  it("streams output as it arrives: the first line comes while the command still runs", async () => {
    const gate = join(home, "gate");
    const child = spawn(
      process.execPath,
      [bin, "exec", `echo first; until [ -e ${gate} ]; do sleep 0.02; done; echo second`],
      {
        env: { ...process.env, SHELLWRIGHT_HOME: home },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    const firstWhileRunning = await new Promise<boolean>((resolve) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        // The library holds a trailing newline until it knows the marker does not follow it.
        if (out.startsWith("first")) resolve(child.exitCode === null && !existsSync(gate));
      });
    });
    expect(firstWhileRunning).toBe(true);
    writeFileSync(gate, "");
    const code = await new Promise((resolve) => child.once("close", resolve));
    expect(code).toBe(0);
    expect(out).toBe("first\nsecond\n");
  });

  it("lists and closes named sessions", () => {
    cli(["exec", "--session", "to-close", "true"]);
    expect(cli(["sessions"]).stdout).toMatch(/^to-close\tlocal\t/m);
    expect(cli(["close", "to-close"])).toMatchObject({ code: 0, stdout: "closed to-close\n" });
    expect(existsSync(join(home, "sessions", "to-close"))).toBe(false);
    expect(cli(["sessions", "--json"]).stdout).not.toContain("to-close");
  });

  const bad: [string, string[], string][] = [
    ["an unknown backend", ["exec", "--backend", "nope", "true"], 'unknown backend "nope"'],
    ["an unknown session for close", ["close", "ghost"], 'No session named "ghost"'],
    ["a negative timeout", ["exec", "--timeout", "-1", "true"], "--timeout must be a positive number of seconds"],
    [
      "a timeout that is not a number",
      ["exec", "--timeout", "soon", "true"],
      '--timeout must be a positive number of seconds, got "soon"',
    ],
    ["no command", ["exec"], "no command given"],
    ["an unknown option", ["exec", "--frobnicate", "true"], "unknown option --frobnicate"],
    ["an unknown command", ["frobnicate"], 'unknown command "frobnicate"'],
    ["a bad session name", ["exec", "--session", "../x", "true"], "invalid session name"],
  ];
  // The library's words (`host must be a string, got undefined`) name nothing a command-line user can set.
  const missing: [string, string, string][] = [
    ["ssh", "host", '{"host": "example.com"}'],
    ["gateway", "url", '{"url": "http://127.0.0.1:7420"}'],
    ["docker", "image", '{"image": "debian:bookworm"}'],
  ];
  for (const [backend, option, example] of missing) {
    it(`says where the ${backend} backend's ${option} goes: a -c FILE.json key, with an example`, () => {
      expect(cli(["exec", "--backend", backend, "true"])).toMatchObject({
        code: 2,
        stderr: `shellwright: the ${backend} backend needs "${option}": put it in a JSON config file and pass -c FILE.json, e.g. ${example}\n`,
      });
    });
  }

  it("says the same when mcp opens its pool", () => {
    const args = ["mcp", "--http", "--port", "0", "--insecure-no-auth", "--pool-size", "1", "--backend", "docker"];
    expect(cli(args)).toMatchObject({
      code: 2,
      stderr:
        'shellwright: the docker backend needs "image": put it in a JSON config file and pass -c FILE.json, e.g. {"image": "debian:bookworm"}\n',
    });
  });

  it("names the config file a refused or missing key belongs in", () => {
    const file = join(home, "ssh-port.json");
    writeFileSync(file, JSON.stringify({ backend: "ssh", host: "example.com", port: "22" }));
    expect(cli(["exec", "-c", file, "true"])).toMatchObject({
      code: 2,
      stderr: `shellwright: ${file}: port must be an integer from 1 to 65535, got "22"\n`,
    });
    const empty = join(home, "empty.json");
    writeFileSync(empty, "{}");
    expect(cli(["exec", "-b", "ssh", "-c", empty, "true"]).stderr).toBe(
      `shellwright: the ssh backend needs "host": add it to ${empty}, e.g. {"host": "example.com"}\n`,
    );
  });

  it("blames a file with `host` and no `backend` on the missing backend, not on the local backend", () => {
    const file = join(home, "host-only.json");
    writeFileSync(file, JSON.stringify({ host: "build-box" }));
    for (const command of [
      ["exec", "-c", file, "true"],
      ["exec", "-s", "host-only", "-c", file, "true"],
    ]) {
      expect(cli(command)).toMatchObject({
        code: 2,
        stderr: `shellwright: ${file}: "host" is an option of the ssh backend, but the config names no "backend" and the default, local, takes no "host"; add "backend": "ssh"\n`,
      });
    }
  });

  for (const [what, args, message] of bad) {
    it(`answers ${what} with one line on stderr and exit 2`, () => {
      const result = cli(args);
      expect(result.code).toBe(2);
      expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(result.stderr).toContain(message);
    });
  }
});

/** A named session on each backend that keeps state outside this process. */
const remoteBackends: { name: string; enabled: boolean; config: () => Record<string, unknown> }[] = [
  {
    name: "docker",
    enabled: process.env.SHELLWRIGHT_TEST_DOCKER === "1",
    config: () => ({
      backend: "docker",
      image: process.env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm",
      network: false,
    }),
  },
  { name: "ssh", enabled: sshTestEnabled, config: () => ({ ...sshTestConfig() }) },
];

for (const backend of remoteBackends) {
  describe.skipIf(!backend.enabled)(`shellwright exec --session on ${backend.name}`, () => {
    it("keeps cwd and variables across processes, lists the session, and closes it for good", () => {
      const configFile = join(home, `${backend.name}.json`);
      writeFileSync(configFile, JSON.stringify(backend.config()));
      const session = `cli-${backend.name}`;
      expect(cli(["exec", "--config", configFile, "--session", session, "cd /tmp && export A=remote"]).code).toBe(0);
      expect(cli(["exec", "--session", session, "pwd; echo $A"])).toMatchObject({ code: 0, stdout: "/tmp\nremote\n" });
      expect(cli(["sessions"]).stdout).toMatch(new RegExp(`^${session}\\t${backend.name}\\t/tmp\\t`, "m"));
      expect(cli(["close", session])).toMatchObject({ code: 0, stdout: `closed ${session}\n` });
      if (backend.name === "docker") {
        const left = spawnSync(
          "docker",
          ["ps", "-a", "--filter", `name=^shellwright-${session}$`, "--format", "{{.Names}}"],
          { encoding: "utf8" },
        );
        expect(left.stdout.trim()).toBe("");
      }
    });
  });
}
