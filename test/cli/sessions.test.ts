/** `shellwright sessions` and `close` on the built command: secrets in a session's config never printed. */

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sshTestConfig, sshTestEnabled } from "../backends/ssh/ssh-env.js";
import { cli, cliHome, exited, spawnCli } from "../helpers/cli.js";
import { alive, eventually } from "../helpers/processes.js";

const where = cliHome();
afterAll(() => where.remove());

const SECRET = "s3cr3t-value-1234";

describe("shellwright sessions", () => {
  it("--json shows env names but never their values", () => {
    const config = join(where.runtime, "config.json");
    writeFileSync(config, JSON.stringify({ backend: "local", env: { API_TOKEN: SECRET } }));
    expect(cli(where, ["exec", "--config", config, "-s", "secretive", 'test "$API_TOKEN" = ' + SECRET])).toMatchObject({
      code: 0,
    });
    const listed = cli(where, ["sessions", "--json"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(SECRET);
    const { sessions } = JSON.parse(listed.stdout) as { sessions: { name: string; config: { env: object } }[] };
    expect(sessions.find((s) => s.name === "secretive")!.config.env).toEqual({ API_TOKEN: "[REDACTED]" });
    expect(cli(where, ["sessions"]).stdout).not.toContain(SECRET);
    expect(cli(where, ["close", "secretive"]).code).toBe(0);
  });

  it("an error about an env value does not print the value", () => {
    const config = join(where.runtime, "bad.json");
    writeFileSync(config, JSON.stringify({ backend: "local", env: { API_TOKEN: `${SECRET}\u0000` } }));
    const result = cli(where, ["exec", "--config", config, "true"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("env.API_TOKEN must not contain a NUL byte");
    expect(result.stderr).not.toContain(SECRET);
  });
});

/** The ssh test server is on loopback: its processes are this machine's, and so are the pid files below. */
const closeBackends = [
  { name: "local", enabled: true, config: () => ({ backend: "local" }) },
  { name: "ssh", enabled: sshTestEnabled, config: () => ({ ...sshTestConfig() }) },
];

for (const backend of closeBackends) {
  describe.skipIf(!backend.enabled)(`shellwright close NAME on ${backend.name}`, () => {
    it("ends what every exec of the session started: a setsid job, a background job, a killed exec's command", async () => {
      const dir = mkdtempSync(join(tmpdir(), "sw-close-"));
      const started: number[] = [];
      try {
        const configFile = join(dir, "config.json");
        writeFileSync(configFile, JSON.stringify(backend.config()));
        const name = `close-${backend.name}`;
        const job = (file: string, seconds: number): string =>
          `sh -c 'echo $$ > ${dir}/${file}; exec sleep ${seconds}'`;
        expect(
          cli(where, [
            "exec",
            "--config",
            configFile,
            "-s",
            name,
            `setsid ${job("setsid", 4711)} >/dev/null 2>&1 & ${job("background", 4712)} >/dev/null 2>&1 & echo started`,
          ]),
        ).toMatchObject({ code: 0, stdout: "started\n" });
        // An exec whose own process is killed mid-command (SIGKILL: nothing of it runs after).
        const killed = spawnCli(where, ["exec", "-s", name, job("killed", 4713)]);
        await eventually(
          () => existsSync(`${dir}/killed`) && readFileSync(`${dir}/killed`, "utf8").endsWith("\n"),
          "the exec's command started",
        );
        process.kill(killed.pid!, "SIGKILL");
        await exited(killed);
        for (const file of ["setsid", "background", "killed"]) {
          const pid = Number(readFileSync(`${dir}/${file}`, "utf8"));
          started.push(pid);
          expect(alive(pid), `${file} ${pid}`).toBe(true);
        }
        expect(cli(where, ["close", name])).toMatchObject({ code: 0, stdout: `closed ${name}\n` });
        await eventually(() => started.every((pid) => !alive(pid)), `close ended ${started.join(", ")}`);
      } finally {
        // Whatever a failed run left, by the pids this test's commands reported.
        for (const pid of started.filter(alive)) process.kill(pid, "SIGKILL");
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  });
}
