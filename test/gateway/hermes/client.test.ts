/**
 * hermes' own client for its tool gateway (ManagedModalEnvironment, vendored
 * unmodified in test/fixtures/hermes/) against `serve --api hermes`, run by
 * Debian's Python: what a hermes agent pointed at a Shellwright gateway gets.
 */

import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/index.js";
import { skipAllUnless } from "../../helpers/native-helper.js";
import { alive, eventually } from "../../helpers/processes.js";
import { api, scratchDir, TOKEN } from "../helpers.js";
import { startHermesGateway } from "./helpers.js";

/** Debian's Python, not a pyenv one first on PATH: `python3-requests` is installed for it. */
const PYTHON = "/usr/bin/python3";
const DRIVER = join(import.meta.dirname, "../../fixtures/hermes/drive_managed_modal.py");

const noPython: string | undefined =
  spawnSync(PYTHON, ["-c", "import requests"], { stdio: "ignore" }).status === 0
    ? undefined
    : `${PYTHON} with requests is missing (apt-get install python3-requests)`;

type Answer = Record<string, unknown> & { output?: string; returncode?: number; error?: string };

/** One hermes client in its own Python process; each call sends one request line and reads one answer line. */
class HermesClient {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #lines: AsyncIterator<string>;

  constructor(gateway: Gateway, home: string) {
    this.#child = spawn(PYTHON, ["-B", "-s", DRIVER], {
      // The token goes in the environment, as hermes reads it, never on a command line.
      env: {
        PATH: "/usr/bin:/bin",
        HOME: home,
        HERMES_HOME: join(home, ".hermes"),
        MODAL_GATEWAY_URL: gateway.url,
        TOOL_GATEWAY_USER_TOKEN: TOKEN,
        PYTHONDONTWRITEBYTECODE: "1",
      },
    });
    this.#lines = createInterface({ input: this.#child.stdout })[Symbol.asyncIterator]();
  }

  async call(request: Record<string, unknown>): Promise<Answer> {
    this.#child.stdin.write(`${JSON.stringify(request)}\n`);
    const line = await this.#lines.next();
    if (line.done) throw new Error(`the hermes client exited: ${this.#stderr()}`);
    const answer = JSON.parse(line.value) as Answer;
    if (answer.error !== undefined) throw new Error(`the hermes client failed: ${answer.error}`);
    return answer;
  }

  #stderr(): string {
    return String(this.#child.stderr.read() ?? "");
  }

  async end(): Promise<void> {
    if (this.#child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.#child.once("exit", resolve));
    this.#child.stdin.end();
    await exited;
  }
}

describe("hermes' ManagedModalEnvironment against serve --api hermes", () => {
  skipAllUnless(noPython);
  let gateway: Gateway;
  let client: HermesClient;
  let sandboxId: string;
  const scratch = scratchDir();
  const execute = (command: string, extra: Record<string, unknown> = {}) =>
    client.call({ op: "execute", command, ...extra });

  beforeAll(async () => {
    gateway = await startHermesGateway();
  });
  afterAll(async () => {
    await gateway.close();
    scratch.remove();
  });
  afterEach(async () => {
    await client?.call({ op: "cleanup" }).catch(() => undefined);
    await client?.end();
  });

  /** A new client and sandbox, as hermes makes one per task. */
  async function open(): Promise<void> {
    const home = join(scratch.path, `home-${Math.random().toString(16).slice(2)}`);
    mkdirSync(home);
    client = new HermesClient(gateway, home);
    sandboxId = (await client.call({ op: "create", kwargs: { cwd: scratch.path, task_id: "t1" } })).sandboxId as string;
  }

  it("creates one sandbox, a Shellwright session opened in its cwd", async () => {
    const before = gateway.registry.size;
    await open();
    expect(gateway.registry.size).toBe(before + 1);
    const session = await api(gateway, "GET", `/v1/sessions/${sandboxId}`);
    expect(session.body).toMatchObject({ id: sandboxId, cwd: scratch.path });
  });

  it("keeps cwd, variables, functions and aliases from one execute to the next", async () => {
    await open();
    expect(await execute("cd /tmp")).toEqual({ output: "", returncode: 0 });
    expect(await execute("pwd")).toEqual({ output: "/tmp\n", returncode: 0 });
    expect(await execute("export X=1")).toEqual({ output: "", returncode: 0 });
    expect(await execute("echo $X")).toEqual({ output: "1\n", returncode: 0 });
    await execute("greet() { echo hello $1; }; alias say='echo said'");
    expect(await execute("greet hermes")).toEqual({ output: "hello hermes\n", returncode: 0 });
    expect(await execute("say it")).toEqual({ output: "said it\n", returncode: 0 });
    expect(await execute("exit 7")).toEqual({ output: "", returncode: 7 });
  });

  it("times out `sleep 30` after its 2 s with 124, leaving no process (by pid)", async () => {
    await open();
    const file = join(scratch.path, `sleep-pid-${sandboxId}`);
    const result = await execute(`sleep 30 & echo $! > ${file}; wait`, { timeout: 2 });
    expect(result.returncode).toBe(124);
    const pid = Number(readFileSync(file, "utf8"));
    expect(pid).toBeGreaterThan(1);
    await eventually(() => !alive(pid), "the timed-out sleep to be gone");
    // The sandbox goes on.
    expect(await execute("echo after")).toEqual({ output: "after\n", returncode: 0 });
  });

  it("cancels on hermes' interrupt: 130, the gateway's exec ended and its process gone (by pid)", async () => {
    await open();
    const file = join(scratch.path, `interrupt-pid-${sandboxId}`);
    const result = await client.call({ op: "interrupt", command: `sleep 30 & echo $! > ${file}; wait`, when: file });
    expect(result).toEqual({ output: "[Command interrupted - Modal sandbox exec cancelled]", returncode: 130 });
    const pid = Number(readFileSync(file, "utf8"));
    await eventually(() => !alive(pid), "the interrupted sleep to be gone");
    // hermes' client does not wait for the cancel's end; the gateway's exec ends all the same.
    await eventually(async () => gateway.registry.info(sandboxId).runningExecutions === 0, "the exec to end");
    expect(await execute("echo next")).toEqual({ output: "next\n", returncode: 0 });
  });

  it("delivers stdin byte for byte", async () => {
    await open();
    const data = "first\r\nsecond ünïcödé ☃ $HOME `cmd` \\ no newline at the end";
    const result = await execute("od -An -v -tx1 | tr -d ' \\n'", { stdin: data });
    expect(result).toEqual({ output: Buffer.from(data, "utf8").toString("hex"), returncode: 0 });
  });

  it("terminates on cleanup: the session closed and its background processes gone (by pid)", async () => {
    await open();
    const file = join(scratch.path, `bg-pid-${sandboxId}`);
    await execute(`setsid sleep 300 >/dev/null 2>&1 & echo $! > ${file}`);
    const pid = Number(readFileSync(file, "utf8"));
    expect(alive(pid)).toBe(true);
    await client.call({ op: "cleanup" });
    expect((await api(gateway, "GET", `/v1/sessions/${sandboxId}`)).status).toBe(404);
    await eventually(() => !alive(pid), "the sandbox's processes to be gone");
  });
});
