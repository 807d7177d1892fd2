/** The bookkeeping Session and the gateway client share: state, close hooks, and a close() that runs once. */

import { describe, expect, it } from "vitest";
import { EnvironmentBase } from "../../src/core/environment-base.js";
import type { ExecuteOptions, ExecuteResult } from "../../src/core/environment.js";
import { InvalidOptionError, SessionClosedError } from "../../src/core/errors.js";

class Probe extends EnvironmentBase {
  readonly backend = "probe";
  shutdowns = 0;
  closedDuringShutdown: boolean | undefined;
  release: () => void = () => undefined;
  readonly #gate: Promise<void>;

  constructor() {
    super(
      { sessionId: "0123456789ab", cwd: "/start", snapshotReady: true },
      { snapshot: "/tmp/s.sh", cwdFile: "/tmp/c.txt" },
      60_000,
    );
    this.#gate = new Promise((resolve) => (this.release = resolve));
  }

  execute(): Promise<ExecuteResult> {
    return Promise.resolve({
      output: "",
      exitCode: 0,
      cwd: this.cwd,
      timedOut: false,
      interrupted: false,
      truncated: false,
      durationMs: 0,
    });
  }

  protected override async shutdown(): Promise<void> {
    this.shutdowns += 1;
    this.closedDuringShutdown = this.closed;
    await this.#gate;
  }

  moveTo(cwd: string): void {
    this.setCwd(cwd);
    this.setSnapshotReady(false);
  }

  gone(): void {
    this.markClosed();
  }

  check(command: string, options: ExecuteOptions = {}): ReturnType<Probe["checkExecute"]> {
    return this.checkExecute(command, options);
  }
}

describe("EnvironmentBase", () => {
  it("reports the state it was given and the changes the implementation makes", () => {
    const probe = new Probe();
    expect(probe.state()).toEqual({ sessionId: "0123456789ab", cwd: "/start", snapshotReady: true });
    probe.moveTo("/elsewhere");
    expect(probe.state()).toEqual({ sessionId: "0123456789ab", cwd: "/elsewhere", snapshotReady: false });
    expect(probe.paths).toEqual({ snapshot: "/tmp/s.sh", cwdFile: "/tmp/c.txt" });
  });

  it("runs the hooks before shutting down, once, however many closes overlap", async () => {
    const probe = new Probe();
    const seen: string[] = [];
    probe.beforeClose(() => {
      seen.push(`hook, closed=${probe.closed}`);
      throw new Error("a failing hook does not stop the close");
    });
    const removed = probe.beforeClose(() => void seen.push("removed hook"));
    removed();
    const first = probe.close();
    const second = probe.close();
    expect(second).toBe(first);
    probe.release();
    await Promise.all([first, second]);
    await probe.close();
    expect(seen).toEqual(["hook, closed=false"]);
    expect(probe.shutdowns).toBe(1);
    expect(probe.closedDuringShutdown).toBe(true);
    expect(probe.closed).toBe(true);
  });

  it("checks a command before running it: the command, then the options, then that it is open", () => {
    const probe = new Probe();
    expect(probe.check("true")).toMatchObject({ timeoutMs: 60_000, isolated: false });
    expect(probe.check("true", { timeoutMs: 5 }).timeoutMs).toBe(5);
    probe.gone();
    expect(() => probe.check("bad\0", { timeoutMs: -1 })).toThrow(InvalidOptionError);
    expect(() => probe.check("true", { timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(() => probe.check("true")).toThrow(SessionClosedError);
  });

  it("has nothing to do on close once the session was found gone", async () => {
    const probe = new Probe();
    let hooks = 0;
    probe.beforeClose(() => void (hooks += 1));
    probe.gone();
    await probe.close();
    expect({ hooks, shutdowns: probe.shutdowns, closed: probe.closed }).toEqual({
      hooks: 0,
      shutdowns: 0,
      closed: true,
    });
  });
});

/** An environment whose helper comes from a fake fast path and a counting installer (no backend here). */
class HelperProbe extends EnvironmentBase {
  readonly backend = "probe";
  installs = 0;
  fastCopy: string | undefined;
  failNext = false;

  constructor(withInstaller = true) {
    super(
      { sessionId: "0123456789ab", cwd: "/start", snapshotReady: true },
      { snapshot: "/tmp/s.sh", cwdFile: "/tmp/c.txt" },
      60_000,
      [],
      withInstaller ? () => this.install() : undefined,
    );
  }

  async install(): Promise<string> {
    this.installs += 1;
    if (this.failNext) {
      this.failNext = false;
      throw new Error("copy failed");
    }
    return "/tmp/installed-swmux";
  }

  protected override host() {
    const copy = this.fastCopy;
    return { fastPath: { prepare: () => undefined, tryRun: () => undefined, helperPath: async () => copy } };
  }

  execute(): Promise<ExecuteResult> {
    return Promise.reject(new Error("not used"));
  }

  protected override async shutdown(): Promise<void> {}
}

describe("EnvironmentBase.helperPath: the session's one helper", () => {
  it("is the fast path's copy when it has one: nothing is installed", async () => {
    const env = new HelperProbe();
    env.fastCopy = "/tmp/fast/swmux";
    expect(await Promise.all([env.helperPath(), env.helperPath()])).toEqual(["/tmp/fast/swmux", "/tmp/fast/swmux"]);
    expect(env.installs).toBe(0);
  });

  it("is installed once when the fast path has none, also for calls at once", async () => {
    const env = new HelperProbe();
    const paths = await Promise.all([env.helperPath(), env.helperPath(), env.helperPath()]);
    expect(paths).toEqual(Array(3).fill("/tmp/installed-swmux"));
    expect(await env.helperPath()).toBe("/tmp/installed-swmux");
    expect(env.installs).toBe(1);
  });

  it("tries a failed install again on the next call", async () => {
    const env = new HelperProbe();
    env.failNext = true;
    await expect(env.helperPath()).rejects.toThrow("copy failed");
    expect(await env.helperPath()).toBe("/tmp/installed-swmux");
    expect(env.installs).toBe(2);
  });

  it("without an installer or a fast-path copy: UnsupportedError naming the backend; closed: SessionClosedError", async () => {
    const env = new HelperProbe(false);
    await expect(env.helperPath()).rejects.toThrow(/probe backend cannot install the helper/);
    await env.close();
    await expect(env.helperPath()).rejects.toBeInstanceOf(SessionClosedError);
  });
});
