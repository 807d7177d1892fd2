/**
 * `shellwright exec --pty` and `shellwright shell` (src/cli/pty-attach.ts)
 * from a real terminal: the CLI runs under a pseudo-terminal of the
 * library's own (a local PTY process, docs/interactive.md), which stands for
 * the user's terminal. Keys typed there reach the program, Ctrl-C reaches
 * the program and not the CLI, a resize reaches the program as SIGWINCH,
 * and the terminal's modes are as they were after every way out.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, processRegistry, type Environment } from "../../src/index.js";
import { shellQuote } from "../../src/core/script.js";
import { bin, cliHome } from "../helpers/cli.js";
import { noStaticHelper, skipAllUnless } from "../helpers/native-helper.js";

const WAIT_MS = 60_000;
const home = cliHome();

describe("exec --pty and shell, from a terminal", () => {
  skipAllUnless(noStaticHelper);
  let terminal: Environment;
  beforeAll(async () => {
    // The user's terminal: its shell has the CLI's private home.
    terminal = await createEnvironment({
      backend: "local",
      cwd: home.runtime,
      env: { SHELLWRIGHT_HOME: home.home, XDG_RUNTIME_DIR: home.runtime },
    });
  });
  afterAll(async () => {
    await terminal?.close();
    home.remove();
  });

  /** The CLI run in the terminal, then whether the terminal's modes are as they were, and its exit code. */
  const cliLine = (args: string[]): string =>
    `__before=$(stty -g); ${shellQuote(process.execPath)} ${shellQuote(bin)} ${args.map(shellQuote).join(" ")}; ` +
    `__rc=$?; [[ $(stty -g) == "$__before" ]] && __modes=restored || __modes=changed; echo "END rc=$__rc modes=$__modes"`;

  it("types into the program, passes Ctrl-C to it, follows the terminal's size, and restores the terminal", async () => {
    const registry = processRegistry(terminal);
    const program = [
      "stty size",
      'read -r line; echo "got:$line"',
      "trap 'stty size' WINCH; trap 'echo got-int; exit 7' INT",
      "echo looping; while :; do sleep 0.1; done",
    ].join("; ");
    const user = await registry.spawn(cliLine(["exec", "--pty", program]), { pty: { cols: 100, rows: 30 } });
    try {
      expect((await registry.waitFor(user, /^30 100$/m, WAIT_MS)).status).toBe("matched");
      registry.markAction(user);
      await registry.write(user, "hello\r");
      expect((await registry.waitFor(user, /got:hello[^]*looping/, WAIT_MS)).status).toBe("matched");
      registry.markAction(user);
      await registry.resize(user, { cols: 120, rows: 40 });
      expect((await registry.waitFor(user, /^40 120$/m, WAIT_MS)).status).toBe("matched");
      registry.markAction(user);
      await registry.write(user, "\x03");
      const end = await registry.waitFor(user, /END rc=\d+ modes=\w+/, WAIT_MS);
      expect(end.output).toContain("got-int");
      // 7: the program's own trap ran; the CLI was not interrupted (that would be 130).
      expect(end.output).toMatch(/END rc=7 modes=restored/);
    } finally {
      await registry.kill(user);
    }
  });

  it("restores the terminal when the CLI is stopped by SIGTERM, and ends the program (exit 143)", async () => {
    const registry = processRegistry(terminal);
    const pidFile = join(home.runtime, "cli.pid");
    // The CLI's pid, written by the shell it replaces.
    const line = cliLine(["exec", "--pty", "echo started; exec sleep 301"]).replace(
      shellQuote(process.execPath),
      () => `bash -c 'echo $$ > ${pidFile}; exec "$@"' bash ${shellQuote(process.execPath)}`,
    );
    const user = await registry.spawn(line, { pty: { cols: 80, rows: 24 } });
    try {
      expect((await registry.waitFor(user, /started/, WAIT_MS)).status).toBe("matched");
      const pid = Number(readFileSync(pidFile, "utf8"));
      registry.markAction(user);
      process.kill(pid, "SIGTERM");
      const end = await registry.waitFor(user, /END rc=\d+ modes=\w+/, WAIT_MS);
      expect(end.output).toMatch(/END rc=143 modes=restored/);
      // The program's terminal session was ended with the CLI's one-off session.
      const left = await terminal.execute("pgrep -fx 'sleep 301' || echo none", { isolated: true });
      expect(left.output).toBe("none\n");
    } finally {
      await registry.kill(user);
    }
  });

  it("restores the terminal when the program cannot start (no PTY helper): one line, exit 1", async () => {
    const registry = processRegistry(terminal);
    const noHelper = `export SHELLWRIGHT_HELPER_DIR=${shellQuote(join(home.runtime, "no-helper"))}`;
    const user = await registry.spawn(`${noHelper}; ${cliLine(["exec", "--pty", "true"])}`, {
      pty: { cols: 80, rows: 24 },
    });
    try {
      const end = await registry.waitFor(user, /END rc=\d+ modes=\w+/, WAIT_MS);
      expect(end.output).toMatch(/shellwright: .*static helper.*\nEND rc=1 modes=restored/);
    } finally {
      await registry.kill(user);
    }
  });

  it("shell: an interactive bash with the named session's cwd, variables, functions and aliases", async () => {
    const registry = processRegistry(terminal);
    const setUp = await terminal.execute(
      `${shellQuote(process.execPath)} ${shellQuote(bin)} exec -s dev 'cd /tmp && export DEV_VAR=from-session && hi() { echo hi-from-fn; } && alias say=echo'`,
      { isolated: true },
    );
    expect(setUp.exitCode, setUp.output).toBe(0);
    const user = await registry.spawn(cliLine(["shell", "-s", "dev"]), { pty: { cols: 100, rows: 30 } });
    try {
      registry.markAction(user);
      await registry.write(user, 'echo "[$PWD $DEV_VAR $(hi) $(type -t say) $TERM $EDITOR]"\r');
      const answer = await registry.waitFor(user, /\[\/tmp .*\]\r?\n/, WAIT_MS);
      expect(answer.output).toMatch(/\[\/tmp from-session hi-from-fn alias xterm-256color \w*\]/);
      registry.markAction(user);
      await registry.write(user, "exit 5\r");
      expect((await registry.waitFor(user, /END rc=\d+ modes=\w+/, WAIT_MS)).output).toMatch(/END rc=5 modes=restored/);
    } finally {
      await registry.kill(user);
      await terminal.execute(`${shellQuote(process.execPath)} ${shellQuote(bin)} close dev`, { isolated: true });
    }
  });
});
