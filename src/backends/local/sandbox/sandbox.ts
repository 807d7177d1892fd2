/**
 * A session's sandbox: one long-lived bwrap that holds the namespaces, and
 * `wrap`, which turns a host launch into one that runs inside them. The local
 * transport wraps every spawn with it; a long-lived launcher (fork server) can
 * be wrapped once the same way, and then pays even the nsenter only once.
 *
 * Processes inside keep host pids in the host's /proc and stay in the call's
 * process group (nsenter forks into the sandbox's pid namespace and does not
 * start a new session), so the transport's group kill works unchanged. stop()
 * ends bwrap's init, and the kernel then kills everything left in the pid
 * namespace, including a background process that left its group.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { BackendUnavailableError } from "../../../core/errors.js";
import { bridgeCommand, BRIDGE_PORT } from "./bridge.js";
import { bwrapArgs, enterArgs } from "./bwrap-args.js";
import { resolveSandbox, type ResolvedSandbox, type SandboxOptions } from "./config.js";
import { hostRuntime, outermost } from "./host-runtime.js";
import { checkSandboxSupport } from "./preflight.js";
import { privatePaths } from "./private-paths.js";
import { startAllowlistProxy, type AllowlistProxy } from "./proxy.js";
import { checkWorkspace } from "./workspace.js";
import { WorkspaceOverlay } from "./overlay.js";

const START_TIMEOUT_MS = 15_000;

export interface SandboxStart {
  /** The session's first cwd, which relative paths in the option resolve against. */
  cwd: string;
  /** The session's private dir, writable inside. */
  stateDir: string;
  /** A private host dir for the proxy's socket (not writable inside). */
  privateRoot: string;
  /** bash, for the init command when there is no bridge. */
  bash: string;
  /** A declared workspace root: seen inside as an overlay whose layers the session's checkpoints keep (overlay.ts). */
  workspace?: string | undefined;
}

export interface Launch {
  argv: string[];
  env: NodeJS.ProcessEnv;
}

export class LocalSandbox {
  readonly #options: SandboxOptions;
  #resolved: ResolvedSandbox | undefined;
  #init: ChildProcess | undefined;
  #initPid: number | undefined;
  #prefix: string[] = [];
  #proxy: AllowlistProxy | undefined;
  #proxyDir: string | undefined;
  #overlay: WorkspaceOverlay | undefined;
  #stopped = false;

  constructor(options: SandboxOptions) {
    this.#options = options;
  }

  /** A started sandbox; one that could not start is stopped again (what it had started goes) before the error. */
  static async open(options: SandboxOptions, start: SandboxStart): Promise<LocalSandbox> {
    const sandbox = new LocalSandbox(options);
    try {
      await sandbox.start(start);
      return sandbox;
    } catch (error) {
      await sandbox.stop();
      throw error;
    }
  }

  /** The paths as resolved at start (for tests and diagnostics). */
  get resolved(): ResolvedSandbox | undefined {
    return this.#resolved;
  }

  /** The workspace's overlay, when the session declared a workspace. */
  get overlay(): WorkspaceOverlay | undefined {
    return this.#overlay;
  }

  /** The host pid of the sandbox's pid 1 (bwrap's init). */
  get initPid(): number | undefined {
    return this.#initPid;
  }

  async start(start: SandboxStart): Promise<void> {
    const tools = await checkSandboxSupport();
    const sandbox = resolveSandbox(this.#options, start.cwd);
    this.#resolved = sandbox;
    let init = ["bash", "-c", "echo ready; exec sleep infinity"].map((part, index) =>
      index === 0 ? start.bash : part,
    );
    let proxySocket: string | undefined;
    if (typeof sandbox.network === "object") {
      this.#proxyDir = await mkdtemp(join(start.privateRoot, "shellwright-proxy-"));
      proxySocket = join(this.#proxyDir, "proxy.sock");
      this.#proxy = await startAllowlistProxy(proxySocket, sandbox.network.allow);
      init = bridgeCommand(proxySocket);
    }
    // The host's runtime dirs (its daemons' sockets) and Shellwright's own files are hidden whatever the
    // options say; see host-runtime.ts and private-paths.ts.
    const runtime = hostRuntime();
    const mine = privatePaths(start.stateDir);
    // A dir inside another is covered with it.
    const covers = outermost([...runtime.hidden, ...mine.roots, ...mine.scratch]);
    const denyRead = [...sandbox.denyRead, ...mine.paths];
    const overlay =
      start.workspace === undefined
        ? undefined
        : new WorkspaceOverlay(
            checkWorkspace(start.workspace, sandbox, [...denyRead.map((d) => d.path), ...covers]),
            start.stateDir,
            tools.nsenter,
          );
    overlay?.prepare();
    const plan = {
      sandbox: { ...sandbox, denyRead },
      workspace: overlay === undefined ? undefined : { root: overlay.root, layers: overlay.layers },
      stateDir: start.stateDir,
      proxySocket,
      hidden: covers.filter((dir) => !mine.scratch.includes(dir)),
      scratch: covers.filter((dir) => mine.scratch.includes(dir)),
      bindBack: runtime.bindBack,
    };
    const args = [...bwrapArgs(plan), ...init];
    const child = spawn(tools.bwrap, args, { stdio: ["ignore", "pipe", "pipe", "pipe"] });
    this.#init = child;
    const info = await waitReady(child);
    this.#initPid = info.childPid;
    // The child pid bwrap reports is the sandbox's pid 1; its root is the finished one once "ready" is printed.
    this.#prefix = enterArgs({
      nsenter: tools.nsenter,
      setpriv: tools.setpriv,
      initPid: info.childPid,
      ownNetwork: sandbox.network !== "host",
      root: process.getuid?.() === 0,
    });
    child.once("exit", () => {
      this.#init = undefined;
    });
    if (overlay !== undefined) {
      this.#overlay = overlay;
      await overlay.mount(info.childPid);
    }
    child.unref();
    for (const stream of [child.stdout, child.stderr, child.stdio[3]])
      (stream as unknown as { unref?(): void } | null)?.unref?.();
  }

  /** A launch of `argv` on the host, turned into the same launch inside the sandbox. */
  wrap(argv: string[], env: NodeJS.ProcessEnv): Launch {
    if (this.#stopped || this.#prefix.length === 0) {
      throw new BackendUnavailableError("The session's sandbox is not running (it was stopped or its init exited).", {
        backend: "local",
      });
    }
    const proxied =
      this.#proxy === undefined
        ? {}
        : Object.fromEntries(
            ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"].map((name) => [
              name,
              `http://127.0.0.1:${BRIDGE_PORT}`,
            ]),
          );
    const noProxy = this.#proxy === undefined ? {} : { NO_PROXY: "", no_proxy: "" };
    return { argv: [...this.#prefix, ...argv], env: { ...env, ...proxied, ...noProxy } };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const init = this.#init;
    if (init?.pid !== undefined && init.exitCode === null) {
      const exited = new Promise<void>((resolve) => init.once("exit", () => resolve()));
      init.ref(); // unref'd while it ran; its exit is awaited now
      // pid 1 going kills the rest of the pid namespace; bwrap itself follows (and --die-with-parent the other way).
      for (const pid of [this.#initPid, init.pid]) {
        try {
          if (pid !== undefined) process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      await exited;
    }
    await this.#proxy?.close();
    if (this.#proxyDir !== undefined) rmSync(this.#proxyDir, { recursive: true, force: true });
  }
}

/** Waits for the init command's "ready" and reads bwrap's info JSON; rejects with what bwrap said. */
function waitReady(child: ChildProcess): Promise<{ childPid: number }> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    let info = "";
    const timer = setTimeout(() => fail(`it did not start within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    const fail = (why: string): void => {
      clearTimeout(timer);
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
      reject(new BackendUnavailableError(`The local sandbox could not start: ${why}`, { backend: "local" }));
    };
    const check = (): void => {
      const match = /"child-pid":\s*(\d+)/.exec(info);
      if (out.includes("ready\n") && match !== null) {
        clearTimeout(timer);
        resolve({ childPid: Number(match[1]) });
      }
    };
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      check();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.stdio[3]?.on("data", (chunk: Buffer) => {
      info += chunk.toString();
      check();
    });
    child.once("error", (error) => fail(error.message));
    child.once("exit", (code, signal) => fail(`bwrap exited (${signal ?? code}): ${err.trim() || out.trim()}`));
  });
}
