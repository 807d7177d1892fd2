/** The dispatcher and the shared flag rules, on the built command: help, version, refused flags, spellings. */

import { createServer } from "node:net";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { bin, cli, cliHome, exited, spawnCli } from "../helpers/cli.js";

const where = cliHome();
afterAll(() => where.remove());

const SUBCOMMANDS = ["exec", "shell", "run", "serve", "mcp", "sessions", "close"];

describe("shellwright help", () => {
  for (const command of SUBCOMMANDS) {
    it(`answers ${command} --help and -h with its usage, exit 0`, () => {
      for (const flag of ["--help", "-h"]) {
        const result = cli(where, [command, flag]);
        expect(result.code).toBe(0);
        expect(result.stdout).toMatch(new RegExp(`^usage: shellwright ${command}\\b`));
        expect(result.stdout).toContain("--help");
      }
    });
  }

  it("shows a command's help with `help CMD`, and the command list without one", () => {
    const exec = cli(where, ["help", "exec"]);
    expect(exec.code).toBe(0);
    expect(exec.stdout).toBe(cli(where, ["exec", "--help"]).stdout);
    expect(exec.stdout).toContain("-s, --session NAME");
    const all = cli(where, ["help"]);
    expect(all.code).toBe(0);
    for (const command of SUBCOMMANDS) expect(all.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
    expect(cli(where, ["help", "nope"]).code).toBe(2);
  });

  it("prints the package's version with --version and -v", async () => {
    const { version } = (await import("../../package.json", { with: { type: "json" } })).default as {
      version: string;
    };
    expect(cli(where, ["--version"])).toMatchObject({ code: 0, stdout: `${version}\n` });
    expect(cli(where, ["-v"])).toMatchObject({ code: 0, stdout: `${version}\n` });
  });
});

describe("refused flags", () => {
  it("refuse an unknown flag before running anything, exit 2 with the usage line", () => {
    const marker = join(where.home, "..", "ran");
    for (const args of [
      ["exec", "--frobnicate", `touch ${marker}`],
      ["exec", "-s", "x", "--frobnicate", `touch ${marker}`],
      ["exec", "-z", `touch ${marker}`],
      ["exec", "--json=yes", `touch ${marker}`],
    ]) {
      const result = cli(where, args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(result.stderr).toContain("usage: shellwright exec [options] [--] COMMAND…");
      expect(existsSync(marker)).toBe(false);
    }
    expect(existsSync(join(where.home, "sessions", "x"))).toBe(false);
  });

  it("refuse an unknown flag on close without closing the session", () => {
    expect(cli(where, ["exec", "-s", "kept", "true"]).code).toBe(0);
    const result = cli(where, ["close", "--force", "kept"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown option --force; usage: shellwright close NAME");
    expect(existsSync(join(where.home, "sessions", "kept", "state.json"))).toBe(true);
  });

  for (const command of ["sessions", "mcp", "serve", "run"]) {
    it(`are refused by ${command} with exit 2`, () => {
      const result = cli(where, [command, "--frobnicate"]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`unknown option --frobnicate; usage: shellwright ${command}`);
    });
  }
});

describe("flag spellings", () => {
  it("take -s for --session and --flag=value as well as --flag value", () => {
    expect(cli(where, ["exec", "-s", "short", "cd /tmp"]).code).toBe(0);
    expect(cli(where, ["exec", "--session=short", "pwd"])).toMatchObject({ code: 0, stdout: "/tmp\n" });
    expect(cli(where, ["exec", "--session", "short", "--cwd=/", "pwd"])).toMatchObject({ code: 0, stdout: "/\n" });
  });

  it("leave the command's own flags alone once the command has started", () => {
    // Several words are an argv: the format is printf's own word, no shell quotes around it.
    expect(cli(where, ["exec", "printf", "%s\\n", "--json", "-s"])).toMatchObject({
      code: 0,
      stdout: "--json\n-s\n",
    });
    expect(cli(where, ["exec", "--", "echo", "--help"])).toMatchObject({ code: 0, stdout: "--help\n" });
  });

  it("read a negative number as the value it looks like", () => {
    const result = cli(where, ["exec", "--timeout", "-1", "true"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--timeout must be a positive number of seconds, got "-1"');
  });

  it("take --timeout-ms, and refuse it together with --timeout", () => {
    const result = cli(where, ["exec", "--timeout-ms=300", "sleep 10"]);
    expect(result.code).toBe(124);
    expect(result.stderr).toContain("[Command timed out after 0.3s]");
    expect(cli(where, ["exec", "--timeout", "1", "--timeout-ms", "1000", "true"]).code).toBe(2);
  });

  it("accept serve --port=N and --port N", async () => {
    for (const spelling of ["equals", "separate"]) {
      const port = await freePort();
      const flag = spelling === "equals" ? [`--port=${port}`] : ["--port", String(port)];
      const child = spawnCli(where, ["serve", "--insecure-no-auth", ...flag]);
      let out = "";
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes("\n")) resolve(out.trim());
        });
        child.once("exit", (code) => reject(new Error(`serve exited ${code}`)));
      });
      expect(url).toBe(`http://127.0.0.1:${port}`);
      child.kill("SIGTERM");
      expect(await exited(child)).toBe(0);
    }
  });

  it("keep serve --backend-config working, with a deprecation note", () => {
    const result = cli(where, ["serve", "--backend-config", "/nonexistent.json", "--insecure-no-auth"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--backend-config is deprecated; use --config");
    expect(result.stderr).toContain('--config "/nonexistent.json" cannot be read');
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe("the CLI's warnings", () => {
  it("says a library warning in one line of its own voice, not Node's process-warning form", () => {
    const own = cliHome();
    try {
      // A helper directory with nothing in it stands for a machine that had no C compiler. A plan's session
      // keeps its fast path (a one-off exec does not try it: see below).
      const plan = join(own.runtime, "plan.json");
      writeFileSync(plan, JSON.stringify([{ tool: "terminal", args: { command: "echo ran" } }]));
      const run = spawnSync(process.execPath, [bin, "run", plan], {
        env: { ...own.env, SHELLWRIGHT_HELPER_DIR: join(own.runtime, "no-helper") },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
      expect(run.stdout).toContain('"output":"ran\\n"');
      // Then the step's output, which run shows on stderr as it comes.
      expect(run.stderr).toBe(
        `shellwright: warning: no fast path: no helper was built for linux-${process.arch} (npm run build needs a C compiler); calls take the plain path\n` +
          "shellwright run: step 1 (terminal):\nran\n",
      );
    } finally {
      own.remove();
    }
  });

  it("a one-off exec in a clone built without a C compiler says nothing of the fast path, however often it runs", () => {
    const own = cliHome();
    try {
      for (let i = 0; i < 2; i++) {
        const run = spawnSync(process.execPath, [bin, "exec", "echo ran"], {
          env: { ...own.env, SHELLWRIGHT_HELPER_DIR: join(own.runtime, "no-helper") },
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
        });
        expect(run).toMatchObject({ status: 0, stdout: "ran\n", stderr: "" });
      }
    } finally {
      own.remove();
    }
  });
});
