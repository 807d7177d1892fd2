/**
 * A second sshd, private to one test file, for tests that stop or restart
 * the server (the shared one serves the compat suite at the same time).
 * Started by the same script CI uses.
 */

import { execFile, execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { SshConfig } from "../../../src/index.js";

const run = promisify(execFile);
const SCRIPT = join(import.meta.dirname, "../../../scripts/test-env/sshd.sh");

export class PrivateSshd {
  private constructor(
    readonly dir: string,
    readonly vars: Record<string, string>,
  ) {}

  /** `readBashrc`: sessions read ~/.bashrc as on a stock server (the shared test server skips it for speed). */
  static async start(options: { readBashrc?: boolean } = {}): Promise<PrivateSshd> {
    const dir = join(await mkdtemp(join(tmpdir(), "sw-sshd-")), "server");
    const env = {
      ...process.env,
      SHELLWRIGHT_SSHD_DIR: dir,
      SHELLWRIGHT_SSHD_READ_BASHRC: options.readBashrc ? "1" : "0",
    };
    const { stdout } = await run("bash", [SCRIPT, "start"], { env });
    const vars: Record<string, string> = {};
    for (const match of stdout.matchAll(/^export (\w+)=(.*)$/gm)) vars[match[1]!] = match[2]!;
    return new PrivateSshd(dir, vars);
  }

  config(): SshConfig {
    return {
      backend: "ssh",
      host: this.vars.SHELLWRIGHT_TEST_SSH_HOST!,
      port: Number(this.vars.SHELLWRIGHT_TEST_SSH_PORT),
      user: this.vars.SHELLWRIGHT_TEST_SSH_USER!,
      keyPath: this.vars.SHELLWRIGHT_TEST_SSH_KEY!,
      knownHostsFile: this.vars.SHELLWRIGHT_TEST_SSH_KNOWN_HOSTS!,
      strictHostKeyChecking: "yes",
    };
  }

  /** Stops the server and every connection it serves (port and keys are kept). */
  down(): Promise<unknown> {
    return this.#script("down");
  }

  up(): Promise<unknown> {
    return this.#script("up");
  }

  restart(): Promise<unknown> {
    return this.#script("restart");
  }

  /** restart(), blocking this process meanwhile: nothing here sees the connections drop until it returns. */
  restartSync(): void {
    execFileSync("bash", [SCRIPT, "restart"], {
      env: { ...process.env, SHELLWRIGHT_SSHD_DIR: this.dir },
      stdio: "ignore",
      timeout: 60_000,
    });
  }

  async stop(): Promise<void> {
    await this.#script("stop");
    await rm(join(this.dir, ".."), { recursive: true, force: true });
  }

  #script(command: string): Promise<unknown> {
    return run("bash", [SCRIPT, command], { env: { ...process.env, SHELLWRIGHT_SSHD_DIR: this.dir } });
  }
}
