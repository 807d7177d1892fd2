/**
 * The docker backend: one long-running container per session, every command
 * a `docker exec` of the wrapped script.
 *
 * Commands go through the Engine API over its unix socket (bench/docker.mjs:
 * it beats starting the `docker` CLI per call); containers are created with
 * the CLI, which takes the user's extra `docker run` arguments verbatim.
 * Forwarded host variables reach the container once, in the init exec's
 * request body: never on a command line, and never on a later exec (the
 * session snapshot carries them forward).
 */

import type { PortUrl } from "../../core/environment.js";
import { publishedPortUrl } from "./ports.js";
import { randomBytes } from "node:crypto";
import { PassThrough } from "node:stream";
import { BackendUnavailableError } from "../../core/errors.js";
import { MAX_INLINE_SCRIPT_BYTES } from "../../core/transport.js";
import type { KillSignal, ProcessHandle, RunOptions, Transport, TreeKill } from "../../core/transport.js";
import { EngineApi, defaultSocketPath, type DockerCall } from "./engine.js";
import { DockerContainer } from "./container.js";
import { startExec } from "./exec.js";
import type { DockerTransportOptions } from "./config.js";
import {
  callMarks,
  CALL_MARK,
  markAssignments,
  newMarkValue,
  SESSION_MARK,
  type CallMarks,
} from "../../core/call-marks.js";
import { parseSweep, sweepScript, type SweepTarget } from "../../core/sweep-script.js";
import { WrapperPids } from "../shared/wrapper-pids.js";
import { OwnerWatchdog } from "../shared/owner-watchdog.js";
import { shellQuote } from "../../core/script.js";
import type { FastCallHandle, FastPath } from "../../core/transport.js";
import { FastPathRunner, type RunningCall } from "../shared/fast-path/fast-path-runner.js";
import type { FastCall } from "../shared/fast-path/helper-client.js";
import { staticHelper } from "../shared/fast-path/helper-path.js";
import { NO_STATIC_HELPER, warnUnavailable } from "../shared/fast-path/unavailable.js";
import { dockerBox, execText } from "./fast-path.js";
import { HelperUnsupported, installBoxHelper, startBoxHelper, type BoxExec } from "../shared/fast-path/box-helper.js";

export class DockerTransport implements Transport {
  readonly name = "docker";
  readonly stdinMode = "pipe";
  readonly tempDir = "/tmp";
  readonly needsRemotePid = true;
  /** Every container of one engine runs its login profile on the engine's CPU. */
  readonly initGroup: string;
  readonly #options: DockerTransportOptions;
  readonly #engine: EngineApi;
  readonly #container: DockerContainer;
  readonly #sessionMark = newMarkValue();
  readonly #marks = new WeakMap<ProcessHandle, CallMarks>();
  /** Wrappers of this session's calls (each leads its own session): close() takes their orphans. */
  readonly #leaders = new WrapperPids();
  /** Fast-path job groups that outlived their call (a background child): close() ends them, whether or not the helper still runs. */
  readonly #endedGroups = new Set<number>();
  /** What an earlier kill round of a call hit (`pid:starttime`). */
  readonly #hit = new WeakMap<ProcessHandle | FastCall, string[]>();
  /** Removes the container if this process dies without close() (a kept one is meant to outlive it). */
  #watchdog: OwnerWatchdog | undefined;
  #fast: FastPathRunner | undefined;
  /** Aborted at stop(): the helper's copy must not outlive the session. */
  readonly #fastStop = new AbortController();
  /** The helper's path in the current container, once copied there (undefined: not yet, or it failed). */
  #helperInstall: Promise<string> | undefined;
  /** Set when the helper can never run in this container: calls stay on the plain path. */
  #helperUnsupported = false;
  /** The helper's path in the container, once copied there (close removes it from a kept container). */
  #helperPath: string | undefined;
  /**
   * Fails a call whose kill could not run in the container (paused, or gone): its wait() rejects with why,
   * since the call's own exit may never be reported (a paused container's processes are frozen).
   */
  readonly #fail = new WeakMap<ProcessHandle | FastCall, (error: unknown) => void>();
  /** Kill sweeps the engine refused (a paused container): tried again before the next call. */
  #pendingSweeps: SweepTarget[] = [];

  constructor(options: DockerTransportOptions) {
    this.#options = options;
    const trace = options.trace === undefined ? undefined : redactingTrace(options.trace);
    this.#engine = new EngineApi(options.socketPath ?? defaultSocketPath(), trace);
    this.initGroup = `docker:${options.socketPath ?? defaultSocketPath()}`;
    this.#container = new DockerContainer(options, this.#engine);
  }

  /** The container's full id; valid after start(). */
  get containerId(): string {
    return this.#container.id;
  }
  get containerName(): string {
    return this.#container.name;
  }

  async start(): Promise<void> {
    await this.#engine.ping();
    await this.#container.attach();
    this.#guard();
    try {
      await this.#container.assertWritable(this.tempDir);
    } catch (error) {
      // What this open created goes with it (Session.open stops the transport when a later step fails).
      await this.stop().catch(() => undefined);
      throw error;
    }
    this.#startFastPath();
  }

  /** The fast path, when it is on and its static helper was built; undefined: every call takes the plain path. */
  get fastPath(): FastPath | undefined {
    return this.#fast;
  }

  /** The fast path's runner (tests and benchmarks: readiness, killing the helper). */
  get fastPathRunner(): FastPathRunner | undefined {
    return this.#fast;
  }

  #startFastPath(): void {
    if (this.#options.fastPath === false) return;
    const helper = staticHelper();
    if (helper === undefined) {
      warnUnavailable(NO_STATIC_HELPER);
      return;
    }
    this.#fast = new FastPathRunner({
      sessionMark: this.#sessionMark,
      // A helper still being copied in or started would hold the call back longer than a plain exec takes.
      queueWhileStarting: false,
      start: (snapshot) => {
        if (this.#helperUnsupported || this.#container.gone !== undefined) return undefined;
        const box = dockerBox(this.#engine, this.#container.id, this.#fastStop.signal);
        const stream = startBoxHelper(
          box,
          this.#installedHelper(box, helper).then((path) => ({
            helper: path,
            snapshot,
            workDir: this.tempDir,
            sessionMark: this.#sessionMark,
          })),
        );
        // A paused container freezes the helper with everything else: its call waits (to its timeout, whose
        // kill then says the container is paused), and the helper, state and all, is there after the unpause.
        return Object.assign(stream, { frozen: () => this.#container.paused() });
      },
      // A started job whose helper died: its group, inside the container.
      onOrphan: (pid) => void this.#sweep({ marks: [], groups: [pid] }, "KILL", 0).catch(() => undefined),
      adopt: (call) => this.#adoptFast(call),
      sweep: (running, signal, graceMs) => this.#sweepFast(running, signal, graceMs),
    });
  }

  /** Copies the helper into the container once; a failed copy is tried again at the helper's next start. */
  #installedHelper(box: BoxExec, helper: { path: string; machine: string }): Promise<string> {
    const install = (this.#helperInstall ??= installBoxHelper(box, helper, this.tempDir, "the container"));
    install.then(
      (path) => (this.#helperPath = path),
      (error: unknown) => {
        if (error instanceof HelperUnsupported) this.#helperUnsupported = true;
        if (this.#helperInstall === install) this.#helperInstall = undefined;
      },
    );
    return install;
  }

  /** A fast-path call whose wait() fails with why when its kill could not run in the container. */
  #adoptFast(call: FastCall): FastCallHandle {
    let checked: Promise<number> | undefined;
    const { failed, fail } = failable();
    this.#fail.set(call, fail);
    // A child without the session's mark (`env -i`) is found at close only by its group: the helper that
    // adopted it may be gone by then (stopped first, or crashed), and with it the parent the sweep follows.
    void call.end.then((end) => {
      if (end.groupLeft && call.pid !== undefined) this.#endedGroups.add(call.pid);
    });
    return {
      output: call.output,
      ...(call.stderr === undefined ? {} : { stderr: call.stderr }),
      end: call.end,
      kill: () => call.kill(),
      // A helper that died with its container shows up as a killed call: only then is it worth asking.
      wait: () =>
        (checked ??= Promise.race([
          call.wait().then(async (code) => {
            if (code >= 128) await this.#container.assertRunning();
            return code;
          }),
          failed,
        ])),
    };
  }

  /** After the helper's signal: the sweep of the call's job group, tree and mark, inside the container. */
  async #sweepFast({ call, marks }: RunningCall, signal: KillSignal, graceMs: number): Promise<boolean> {
    const pid = call.pid;
    const before = this.#hit.get(call) ?? [];
    const output = await this.#sweepFor(
      call,
      {
        marks: [`${CALL_MARK}=${marks.call}`],
        root: pid,
        groups: pid === undefined ? [] : [pid],
        remembered: before,
      },
      signal,
      graceMs,
    );
    const sweep = parseSweep(output);
    this.#hit.set(call, [...new Set([...before, ...sweep.hit])]);
    return sweep.clean && pid !== undefined;
  }

  /** The owner watchdog's pid, while the session is open. */
  get watchdogPid(): number | undefined {
    return this.#watchdog?.pid;
  }

  #guard(): void {
    this.#watchdog?.release();
    this.#watchdog = undefined;
    if (this.#options.keepContainer || this.#container.id === "") return;
    const docker = shellQuote(this.#options.dockerPath ?? "docker");
    const socket = this.#options.socketPath;
    this.#watchdog = new OwnerWatchdog({
      cleanup: `${docker} rm -f ${shellQuote(this.#container.id)} >/dev/null 2>&1`,
      ...(socket === undefined ? {} : { env: { DOCKER_HOST: `unix://${socket}` } }),
    });
  }

  /**
   * A container that died since the last call is replaced before the next
   * one, unless it is meant to persist: then the caller is told it is gone.
   */
  async beforeExecute(): Promise<"restarted" | undefined> {
    if (this.#container.gone === undefined) {
      await this.#retrySweeps();
      return undefined;
    }
    this.#pendingSweeps = [];
    if (this.#options.keepContainer)
      throw new BackendUnavailableError(this.#container.goneMessage(), { backend: this.name });
    await this.#container.remove().catch(() => undefined);
    // The helper went with the old container: the new one gets its own copy.
    this.#fast?.killHelper();
    this.#helperInstall = undefined;
    this.#helperPath = undefined;
    this.#helperUnsupported = false;
    await this.#container.attach();
    this.#guard();
    return "restarted";
  }

  runBash(script: string, options: RunOptions): ProcessHandle {
    const marks = callMarks(this.#sessionMark);
    const handle =
      Buffer.byteLength(script) > MAX_INLINE_SCRIPT_BYTES
        ? this.#runStaged(script, options, marks)
        : this.#exec(script, options, marks);
    let checked: Promise<number> | undefined;
    const { failed, fail } = failable();
    const result: ProcessHandle = {
      output: this.#leaders.watch(handle.output),
      ...(handle.stderr === undefined ? {} : { stderr: handle.stderr }),
      kill: () => handle.kill(),
      wait: () =>
        (checked ??= Promise.race([
          handle.wait().then(
            async (code) => {
              // A killed container shows up as a killed process: only then is it worth asking.
              if (code >= 128) await this.#container.assertRunning();
              return code;
            },
            async (error: unknown) => {
              throw await this.#container.explain(error, "start");
            },
          ),
          failed,
        ])),
    };
    this.#fail.set(result, fail);
    this.#marks.set(result, marks);
    return result;
  }

  #exec(script: string, options: RunOptions, marks: CallMarks): ProcessHandle {
    const bash = ["bash", "-c", script];
    // cleanEnv: the snapshot is the whole truth about the environment, so the
    // container's own variables must not come back behind an `unset`. The
    // marks go on env's command line, so the waiter (exec.ts) never carries them.
    const cmd = ["env", ...(options.cleanEnv ? ["-i"] : []), ...markAssignments(marks), ...bash];
    return startExec(this.#engine, {
      containerId: this.#container.id,
      cmd,
      reportExit: true,
      env: options.cleanEnv ? undefined : this.#initEnv(),
      stdin: options.stdin,
      separateStreams: options.separateStreams,
    });
  }

  /** A script too long for one argv string is copied into the container first, then run from there. */
  #runStaged(script: string, options: RunOptions, marks: CallMarks): ProcessHandle {
    const file = `${this.tempDir}/shellwright-script-${randomBytes(6).toString("hex")}.sh`;
    const output = new PassThrough();
    const stderr = options.separateStreams === true ? new PassThrough() : undefined;
    let current: ProcessHandle | undefined;
    let killed = false;
    const exited = (async () => {
      const upload = startExec(this.#engine, {
        containerId: this.#container.id,
        cmd: ["bash", "-c", `umask 077 && cat > ${file}`],
        stdin: Buffer.from(script),
      });
      current = upload;
      for await (const chunk of upload.output) if (!output.writableEnded) output.write(chunk);
      const uploaded = await upload.wait();
      if (uploaded !== 0 || killed) {
        output.end();
        stderr?.end();
        return uploaded === 0 ? 137 : uploaded;
      }
      // The same bash runs the script (so $$ is the wrapper's PID), after removing the file.
      const run = this.#exec(`__sw_script=$(<${file}); rm -f ${file}; eval "$__sw_script"`, options, marks);
      current = run;
      void (async () => {
        for await (const chunk of run.output) if (!output.writableEnded) output.write(chunk);
      })()
        .catch(() => undefined)
        .finally(() => output.end());
      if (stderr !== undefined)
        void (async () => {
          for await (const chunk of run.stderr ?? []) if (!stderr.writableEnded) stderr.write(chunk);
        })()
          .catch(() => undefined)
          .finally(() => stderr.end());
      return run.wait();
    })();
    exited.catch(() => (output.end(), stderr?.end()));
    return {
      output,
      ...(stderr === undefined ? {} : { stderr }),
      wait: () => exited,
      kill: () => {
        killed = true;
        current?.kill();
      },
    };
  }

  /**
   * The shared sweep inside the container: the wrapper (first, alone), its
   * descendants, its group and session when it leads them (exec.ts runs it
   * under setsid where the image has it), and everything carrying the call's mark.
   */
  async killTree(handle: ProcessHandle, { signal, remotePid, graceMs }: TreeKill): Promise<boolean> {
    const fast = this.#fast?.kill(handle, signal, graceMs);
    if (fast !== undefined) return fast;
    const marks = this.#marks.get(handle);
    if (remotePid === undefined && marks === undefined) {
      handle.kill();
      return false;
    }
    const before = this.#hit.get(handle) ?? [];
    const leaders = remotePid === undefined ? [] : [remotePid];
    const output = await this.#sweepFor(
      handle,
      {
        marks: marks === undefined ? [] : [`${CALL_MARK}=${marks.call}`],
        root: remotePid,
        groups: leaders,
        sessions: leaders,
        remembered: before,
      },
      signal,
      graceMs,
    );
    const sweep = parseSweep(output);
    this.#hit.set(handle, [...new Set([...before, ...sweep.hit])]);
    if (remotePid === undefined) handle.kill();
    return sweep.clean && remotePid !== undefined;
  }

  /** The kills a paused container refused, now that it may run them; one the engine still refuses stays pending. */
  async #retrySweeps(): Promise<void> {
    const targets = this.#pendingSweeps.splice(0);
    for (const target of targets)
      await this.#sweep(target, "KILL", 0).catch(() => {
        this.#pendingSweeps.push(target);
      });
  }

  /** A call's kill sweep; when the engine refuses it, the call fails with why (the error is thrown too). */
  async #sweepFor(
    call: ProcessHandle | FastCall,
    target: SweepTarget,
    signal: KillSignal,
    graceMs: number,
  ): Promise<string> {
    try {
      return await this.#sweep(target, signal, graceMs);
    } catch (error) {
      this.#pendingSweeps.push(target);
      const explained = await this.#container.explain(error, "kill");
      if (explained instanceof BackendUnavailableError) this.#fail.get(call)?.(explained);
      throw explained;
    }
  }

  async #sweep(target: SweepTarget, signal: KillSignal, graceMs: number): Promise<string> {
    const killer = startExec(this.#engine, {
      containerId: this.#container.id,
      cmd: ["bash", "-c", sweepScript(target, signal, graceMs)],
    });
    const decoder = new TextDecoder();
    let output = "";
    for await (const chunk of killer.output) output += decoder.decode(chunk, { stream: true });
    await killer.wait();
    return output;
  }

  portUrl(port: number): Promise<PortUrl> {
    return publishedPortUrl(this.#engine, this.#container, port);
  }

  async stop(): Promise<void> {
    // The helper and its launcher first: nothing new may start while the session's processes are killed.
    this.#fast?.stop();
    this.#fastStop.abort();
    this.#fast = undefined;
    const helper = this.#helperPath;
    this.#helperInstall = undefined;
    this.#helperPath = undefined;
    try {
      // A kept container outlives the session: what the session started must not.
      if (this.#options.keepContainer && this.#container.id !== "" && this.#container.gone === undefined)
        await this.#sweep(
          {
            marks: [`${SESSION_MARK}=${this.#sessionMark}`],
            sessions: this.#leaders.all,
            groups: [...this.#leaders.all, ...this.#endedGroups],
            deadLeadersOnly: true,
          },
          "KILL",
          0,
        ).catch(() => undefined);
      // A kept container keeps no copy of the helper either.
      if (this.#options.keepContainer && helper !== undefined && this.#container.gone === undefined)
        await execText(this.#engine, this.#container.id, ["rm", "-rf", helper.slice(0, helper.lastIndexOf("/"))]).catch(
          () => undefined,
        );
      if (!this.#options.keepContainer) await this.#container.remove();
      // Released only once the container is gone: one the engine could not remove is removed when this process exits.
      this.#watchdog?.release();
      this.#watchdog = undefined;
    } finally {
      this.#engine.close();
    }
  }

  /** Forwarded host variables (missing or empty ones are skipped) and the configured env, as `NAME=value`. */
  #initEnv(): string[] {
    const env: string[] = [];
    for (const name of this.#options.forwardEnv) {
      const value = process.env[name];
      if (value !== undefined && value !== "") env.push(`${name}=${value}`);
    }
    for (const [name, value] of Object.entries(this.#options.env)) env.push(`${name}=${value}`);
    return env;
  }
}

/** A promise that only rejects, when fail() is called (see DockerTransport's #fail). */
function failable(): { failed: Promise<never>; fail: (error: unknown) => void } {
  let fail: (error: unknown) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => undefined);
  return { failed, fail };
}

/** The trace shows which variables an exec carried, never their values. */
function redactingTrace(trace: (call: DockerCall) => void): (call: DockerCall) => void {
  return (call) => {
    if (
      call.via === "api" &&
      typeof call.body === "object" &&
      call.body !== null &&
      Array.isArray((call.body as { Env?: unknown }).Env)
    ) {
      const body = call.body as { Env: string[] };
      trace({ ...call, body: { ...body, Env: body.Env.map((entry) => `${entry.split("=")[0]}=…`) } });
    } else {
      trace(call);
    }
  };
}
