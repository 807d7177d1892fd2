/**
 * The session's container as the Engine sees it: attached to by name or
 * created, checked for a writable temp dir, and explained when the engine
 * refuses an exec (paused, stopped, removed). DockerTransport runs calls in
 * it; this class knows only the container's life, never a call.
 */

import { randomBytes } from "node:crypto";
import { BackendUnavailableError } from "../../core/errors.js";
import { runDockerCli } from "./cli.js";
import { ApiError, engineMessage, type EngineApi } from "./engine.js";
import type { DockerTransportOptions } from "./config.js";
import { execText } from "./fast-path.js";
import { removeContainer } from "./removal.js";
import { dockerRunArgs } from "./run-args.js";

const BACKEND = "docker";

export class DockerContainer {
  readonly #options: DockerTransportOptions;
  readonly #engine: EngineApi;
  #id = "";
  #name = "";
  /** Why the container is unusable (it stopped or was removed), until it is replaced. */
  #gone: string | undefined;

  constructor(options: DockerTransportOptions, engine: EngineApi) {
    this.#options = options;
    this.#engine = engine;
  }

  /** The container's full id; empty before attach(). */
  get id(): string {
    return this.#id;
  }
  get name(): string {
    return this.#name;
  }
  /** Why the container cannot be used, or undefined while it can. */
  get gone(): string | undefined {
    return this.#gone;
  }

  /** Attaches to the container named in the options (starting it if stopped) or creates one. */
  async attach(): Promise<void> {
    this.#gone = undefined;
    const name = this.#options.containerName;
    if (name !== undefined) {
      const response = await this.#engine.request("GET", `/containers/${encodeURIComponent(name)}/json`);
      if (response.status === 200) {
        const info = response.json as { Id: string; State?: { Running?: boolean } };
        if (info.State?.Running !== true) {
          const started = await this.#engine.request("POST", `/containers/${info.Id}/start`);
          if (started.status !== 204 && started.status !== 304) {
            throw new BackendUnavailableError(
              `Could not start docker container ${name}: ${engineMessage(started.text)}`,
              { backend: BACKEND },
            );
          }
        }
        this.#id = info.Id;
        this.#name = name;
        return;
      }
      if (response.status !== 404)
        throw new BackendUnavailableError(
          `Could not inspect docker container ${name}: ${engineMessage(response.text)}`,
          { backend: BACKEND },
        );
    }
    await this.#create(name ?? `shellwright-${randomBytes(4).toString("hex")}`);
  }

  async #create(name: string): Promise<void> {
    const cli = {
      dockerPath: this.#options.dockerPath,
      trace: this.#options.trace,
      socketPath: this.#options.socketPath,
    };
    const result = await runDockerCli(dockerRunArgs(this.#options, name), cli);
    if (result.code !== 0) {
      // A failed run can leave a container behind, created or even started (the engine was cut off after it
      // made it): removed by its name, retried while the engine cannot be reached.
      await removeContainer(this.#engine, name, name).catch(() => undefined);
      throw new BackendUnavailableError(
        `docker run failed (exit ${result.code}) for image ${this.#options.image}: ${result.stderr.trim() || result.stdout.trim()}`,
        { backend: BACKEND },
      );
    }
    this.#id = result.stdout.trim().split("\n").pop() ?? name;
    this.#name = name;
  }

  /** Removes the container, whatever its state, retried through an engine outage (removal.ts); throws when it could not. */
  async remove(): Promise<void> {
    if (this.#id === "") return;
    await removeContainer(this.#engine, this.#id, this.#name);
  }

  /** Throws (and remembers) that the container is gone, if the engine says it stopped or was removed. */
  async assertRunning(): Promise<void> {
    const response = await this.#engine.request("GET", `/containers/${this.#id}/json`);
    if (response.status === 404) this.#gone = "it was removed";
    else if ((response.json as { State?: { Running?: boolean } } | undefined)?.State?.Running === false)
      this.#gone = "it stopped";
    else return;
    throw new BackendUnavailableError(this.goneMessage(), { backend: BACKEND });
  }

  /** `when`: the engine refused to start the call ("start") or to kill it at its timeout or interrupt ("kill"). */
  async explain(error: unknown, when: "start" | "kill"): Promise<unknown> {
    // A paused container refuses execs with 409 too, but it is not dead: its processes and the session's state
    // are all there, and `docker unpause` brings them back. Nothing is replaced; the caller may retry.
    if (error instanceof ApiError && error.status === 409 && (await this.paused())) {
      const what =
        when === "start"
          ? "so the command did not run"
          : "so the stopped command could not be killed yet (it is frozen; the next call kills it first)";
      return new BackendUnavailableError(
        `The docker container ${this.#name} (${this.#id.slice(0, 12)}) is paused, ${what}. ` +
          `Run \`docker unpause ${this.#name}\` and retry; the session is kept (exported variables and the cwd are as they were).`,
        { cause: error, backend: BACKEND },
      );
    }
    if (error instanceof ApiError && (error.status === 404 || error.status === 409)) {
      this.#gone = error.status === 404 ? "it was removed" : "it is not running";
      return new BackendUnavailableError(this.goneMessage(), { cause: error, backend: BACKEND });
    }
    if (error instanceof ApiError)
      return new BackendUnavailableError(`Docker Engine error: ${error.message}`, { cause: error, backend: BACKEND });
    return error;
  }

  /**
   * The session's snapshot and each call's pending state live in `dir`: a read-only root filesystem
   * (`--read-only`) without a writable mount there would open fine and then make every call exit 125
   * unrun. Only such a container pays for the probe.
   */
  async assertWritable(dir: string): Promise<void> {
    const response = await this.#engine.request("GET", `/containers/${this.#id}/json`);
    const info = response.json as { HostConfig?: { ReadonlyRootfs?: boolean } } | undefined;
    if (info?.HostConfig?.ReadonlyRootfs !== true) return;
    const probe = await execText(this.#engine, this.#id, [
      "bash",
      "-c",
      `f=$(mktemp ${dir}/shellwright-probe-XXXXXX) && rm -f "$f"`,
    ]);
    if (probe.code === 0) return;
    throw new BackendUnavailableError(
      `The docker container ${this.#name} has a read-only root filesystem and ${dir} is not writable, ` +
        `where Shellwright keeps the session's state: add "--tmpfs", "${dir}:exec" to extraArgs ` +
        `(or mount a writable volume at ${dir}). ${probe.text.trim()}`.trim(),
      { backend: BACKEND },
    );
  }

  /** True when the engine says the container is paused (false when it cannot say). */
  async paused(): Promise<boolean> {
    const response = await this.#engine.request("GET", `/containers/${this.#id}/json`).catch(() => undefined);
    return (response?.json as { State?: { Paused?: boolean } } | undefined)?.State?.Paused === true;
  }

  goneMessage(): string {
    const what = `The docker container ${this.#name} (${this.#id.slice(0, 12)}) is gone: ${this.#gone ?? "it stopped"}.`;
    return this.#options.keepContainer
      ? `${what} It is a kept container, so it is not recreated; start it again or close this environment and create a new one.`
      : `${what} The next command starts a new container (a fresh session: exported variables and the cwd start over).`;
  }
}
