/**
 * createEnvironment(config): validates the config once, picks the backend's
 * Transport and opens a Session over it.
 */

import { InvalidOptionError } from "../core/errors.js";
import {
  describe,
  fraction,
  optionalShellString,
  plainObject,
  positiveInteger,
  positiveNumber,
  rejectUnknown,
  shellString,
  stringRecord,
} from "../core/options.js";
import type { Environment, SessionState } from "../core/environment.js";
import { Session, type SessionOptions } from "../core/session.js";
import { LocalTransport } from "./local/transport.js";
import { GatewayEnvironment } from "./gateway/environment.js";
import { TOKEN_ENV_VAR, type CreateSessionRequest } from "./gateway/protocol.js";
import { ApptainerTransport, defaultScratchDir } from "./apptainer/transport.js";
import { ModalTransport, type ModalApi } from "./modal/transport.js";
import { DaytonaTransport, type DaytonaApi } from "./daytona/transport.js";
import { normalizeSyncConfig, type SyncConfig } from "../sync/options.js";
import { SSH_KEYS, normalizeSshConfig, type SshConfigOptions } from "./ssh/config.js";
import { SshTransport } from "./ssh/transport.js";
import { DockerTransport } from "./docker/transport.js";
import { DOCKER_OPTION_KEYS, normalizeDockerOptions, type DockerOptions } from "./docker/config.js";

/** Options every backend takes. */
export interface CommonConfig {
  /**
   * The session's first working directory; `~` is expanded by bash on the backend.
   * @default the current directory (local)
   */
  cwd?: string;
  /** @default 180000 */
  timeoutMs?: number;
  /** Output kept per command, head and tail, in characters (UTF-8 bytes). @default 50000 */
  maxOutputChars?: number;
  /** Share of maxOutputChars kept from the start. @default 0.4 */
  outputHeadFraction?: number;
  /** Between SIGTERM and SIGKILL when a command is stopped. @default 1000 */
  killGraceMs?: number;
  /** Limit for the one-time snapshot bootstrap. @default 30000 */
  initTimeoutMs?: number;
  /** Receives warnings (a failed init). @default writes to stderr */
  onWarning?: (message: string) => void;
  /** Reattach to an existing session (see Session.state()). */
  resume?: SessionState;
}

export interface LocalConfig extends CommonConfig {
  backend?: "local";
  /** Variables added to this process's environment for the session. */
  env?: Record<string, string>;
  /** Directory for the session's snapshot and cwd files. @default a new private temp dir */
  stateDir?: string;
  /** @default the first bash on PATH */
  bashPath?: string;
}

/** A long-running container; every command is a `docker exec`. */
export interface DockerConfig extends CommonConfig, DockerOptions {
  backend: "docker";
  /** @default "/root" ("/workspace" with mountCwd) */
  cwd?: string;
}


export interface SshConfig extends CommonConfig, SshConfigOptions {
  backend: "ssh";
}


export interface ApptainerConfig extends CommonConfig {
  backend: "apptainer";
  /** `docker://image:tag`, a `.sif` file, or anything `apptainer instance start` accepts. */
  image: string;
  /** `apptainer`, `singularity` or a path. @default whichever is on PATH, apptainer first */
  executable?: string;
  /** Bind mounts, `host[:container[:ro|rw]]`. @default none */
  binds?: string[];
  /** A persistent overlay directory or image. @default none: a writable tmpfs, gone at close */
  overlay?: string;
  /** Host directory mounted as the container's home. @default none (`--no-home`) */
  homeDir?: string;
  /** CPU limit (`--cpus`). @default no limit */
  cpus?: number;
  /** Memory limit in MiB (`--memory`). @default no limit */
  memoryMiB?: number;
  /** Apptainer's temp and cache space. @default /scratch/$USER/shellwright when writable, else the OS temp dir */
  scratchDir?: string;
  /** Image cache (`APPTAINER_CACHEDIR`). @default <scratchDir>/cache */
  cacheDir?: string;
  /** Variables for the session's first shell, passed as APPTAINERENV_* (never on a command line). */
  env?: Record<string, string>;
  /** Limit for `instance start` (pulling a docker:// image can be slow). @default 300000 */
  startTimeoutMs?: number;
}

export interface ModalConfig extends CommonConfig {
  backend: "modal";
  /** A registry image or a Modal image id (`im-…`). @default "debian:bookworm-slim" */
  image?: string;
  /** Add Python to the image; "auto" adds it to ubuntu/debian registry images. @default "auto" */
  addPython?: boolean | "auto";
  /** The Modal app the sandbox belongs to (created when missing). @default "shellwright" */
  appName?: string;
  /** CPU cores reserved (fractional allowed). @default Modal's default */
  cpu?: number;
  /** Memory reserved, in MiB. @default Modal's default */
  memoryMiB?: number;
  /** The sandbox's maximum lifetime. @default 3600000 (one hour) */
  lifetimeMs?: number;
  /** Terminate the sandbox after this long without activity. @default none */
  idleTimeoutMs?: number;
  /** The sandbox's environment, set at creation (never on a command line). */
  env?: Record<string, string>;
  /** A Modal client (`new ModalClient({...})` from the `modal` package), or a fake for tests. @default new ModalClient() */
  client?: ModalApi;
  /** Files and directories mirrored into the sandbox before commands (the sandbox filesystem API). */
  sync?: SyncConfig;
}

export interface DaytonaConfig extends CommonConfig {
  backend: "daytona";
  /** A registry image for a new sandbox. @default Daytona's default snapshot */
  image?: string;
  /** A Daytona snapshot for a new sandbox (instead of `image`). */
  snapshot?: string;
  /** Resume the sandbox with this name (starting it if stopped), or create one under this name. */
  name?: string;
  /** Resume the first sandbox with these labels; a new sandbox gets them. */
  labels?: Record<string, string>;
  /** CPUs of a new sandbox. @default Daytona's default */
  cpu?: number;
  /** Memory of a new sandbox, in GiB. @default Daytona's default */
  memoryGiB?: number;
  /** Disk of a new sandbox, in GiB. @default Daytona's default */
  diskGiB?: number;
  /** Minutes without activity before Daytona stops the sandbox; 0 = never. @default Daytona's default */
  autoStopMinutes?: number;
  /** The sandbox's environment, set at creation (never on a command line). */
  env?: Record<string, string>;
  /** What close() does: "delete" the sandbox, "stop" it (resumable) or "keep" it running. @default "stop" with name or labels, else "delete" */
  onClose?: "delete" | "stop" | "keep";
  /** Limit for creating or starting the sandbox. @default 300000 */
  startTimeoutMs?: number;
  /** A Daytona client (`new Daytona({...})` from `@daytonaio/sdk`), or a fake for tests. @default new Daytona() */
  client?: DaytonaApi;
  /** Files and directories mirrored into the sandbox before commands (`fs.uploadFiles`). */
  sync?: SyncConfig;
}


export interface GatewayConfig extends CommonConfig {
  backend: "gateway";
  /** Base URL of a `shellwright serve`, e.g. http://127.0.0.1:7420 */
  url: string;
  /** The gateway's bearer token. @default $SHELLWRIGHT_GATEWAY_TOKEN */
  token?: string;
  /** Variables added to the session's starting environment on the gateway's backend. */
  env?: Record<string, string>;
  /** How long to keep retrying while the gateway refuses connections (restarting). @default 3000 */
  connectRetryMs?: number;
  /** Limit for a control request (create, close, cancel); an execution waits for its own timeout on top. @default 30000 */
  requestTimeoutMs?: number;
  /** How long an execution keeps retrying while the gateway is at its execution limit (429). @default 30000 */
  busyTimeoutMs?: number;
}

export type EnvironmentConfig = LocalConfig | DockerConfig | SshConfig | ApptainerConfig | ModalConfig | DaytonaConfig | GatewayConfig;
export type { Environment };

export const BACKENDS = ["local", "docker", "ssh", "apptainer", "modal", "daytona", "gateway"] as const;
export type BackendName = (typeof BACKENDS)[number];

const COMMON_KEYS = ["backend", "cwd", "timeoutMs", "maxOutputChars", "outputHeadFraction", "killGraceMs", "initTimeoutMs", "onWarning", "resume"] as const;

export async function createEnvironment(config: EnvironmentConfig = {}): Promise<Environment> {
  const raw = plainObject("config", config);
  const backend = raw.backend ?? "local";
  if (!(BACKENDS as readonly unknown[]).includes(backend)) {
    throw new InvalidOptionError("backend", `Unknown backend ${describe(backend)}; available: ${BACKENDS.join(", ")}`);
  }
  if (backend === "docker") {
    rejectUnknown("docker backend", raw, [...COMMON_KEYS, ...DOCKER_OPTION_KEYS]);
    const docker = normalizeDockerOptions(raw);
    return Session.open(new DockerTransport(docker), sessionOptions(raw as CommonConfig, docker.mountCwd === undefined ? "/root" : "/workspace"));
  }
  if (backend === "gateway") return openGateway(raw);
  if (backend === "ssh") {
    rejectUnknown("ssh backend", raw, [...COMMON_KEYS, ...SSH_KEYS]);
    const options = sessionOptions(raw as CommonConfig, "~");
    return Session.open(new SshTransport(normalizeSshConfig(raw, options.warn)), options);
  }
  if (backend === "apptainer") {
    return Session.open(apptainerTransport(raw), sessionOptions(raw as CommonConfig, "~"));
  }
  if (backend === "modal") {
    const options = sessionOptions(raw as CommonConfig, "~");
    return Session.open(modalTransport(raw, options.warn), options);
  }
  if (backend === "daytona") {
    const options = sessionOptions(raw as CommonConfig, "~");
    return Session.open(daytonaTransport(raw, options.warn), options);
  }
  rejectUnknown("local backend", raw, [...COMMON_KEYS, "env", "stateDir", "bashPath"]);
  const local = raw as LocalConfig;
  const transport = new LocalTransport({
    env: stringRecord("env", local.env),
    stateDir: optionalShellString("stateDir", local.stateDir),
    bashPath: optionalShellString("bashPath", local.bashPath),
  });
  return Session.open(transport, sessionOptions(local, process.cwd()));
}

async function openGateway(raw: Record<string, unknown>): Promise<Environment> {
  rejectUnknown("gateway backend", raw, [...COMMON_KEYS, "url", "token", "env", "connectRetryMs", "requestTimeoutMs", "busyTimeoutMs"]);
  const config = raw as unknown as GatewayConfig;
  let url: URL;
  try {
    url = new URL(shellString("url", config.url));
  } catch (error) {
    if (error instanceof InvalidOptionError) throw error;
    throw new InvalidOptionError("url", `url must be an http:// or https:// URL, got ${describe(config.url)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new InvalidOptionError("url", `url must be an http:// or https:// URL, got ${describe(config.url)}`);
  const token = config.token ?? process.env[TOKEN_ENV_VAR];
  if (token !== undefined && (typeof token !== "string" || token === "" || /\s/.test(token))) {
    throw new InvalidOptionError("token", "token must be a non-empty string without whitespace");
  }
  const session = sessionOptions(config, "~");
  if (url.protocol === "http:" && token !== undefined && !isLoopbackHost(url.hostname)) {
    session.warn(`the gateway token is sent unencrypted to ${url.host}; use https:// or a loopback address`);
  }
  // Only what the caller chose goes to the gateway; the gateway's config fills the rest.
  const request: CreateSessionRequest = {};
  for (const key of ["cwd", "timeoutMs", "maxOutputChars", "outputHeadFraction", "killGraceMs", "initTimeoutMs"] as const) {
    if (config[key] !== undefined) Object.assign(request, { [key]: session[key] });
  }
  if (config.env !== undefined) request.env = stringRecord("env", config.env);
  return GatewayEnvironment.open(
    {
      url,
      token,
      connectRetryMs: nonNegativeNumber("connectRetryMs", config.connectRetryMs, 3000),
      requestTimeoutMs: positiveNumber("requestTimeoutMs", config.requestTimeoutMs, 30_000),
      busyTimeoutMs: nonNegativeNumber("busyTimeoutMs", config.busyTimeoutMs, 30_000),
      timeoutMs: session.timeoutMs,
      killGraceMs: session.killGraceMs,
      maxOutputChars: session.maxOutputChars,
      outputHeadFraction: session.outputHeadFraction,
      warn: session.warn,
    },
    request,
    session.resume,
  );
}

function nonNegativeNumber(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new InvalidOptionError(name, `${name} must be a number of milliseconds, 0 or more, got ${describe(value)}`);
  }
  return value;
}

const isLoopbackHost = (host: string): boolean => host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);

function sessionOptions(config: CommonConfig, defaultCwd: string): SessionOptions {
  const warn = config.onWarning ?? ((message: string) => process.stderr.write(`shellwright: warning: ${message}\n`));
  if (typeof warn !== "function") throw new InvalidOptionError("onWarning", `onWarning must be a function, got ${describe(warn)}`);
  const options: SessionOptions = {
    cwd: optionalShellString("cwd", config.cwd) ?? defaultCwd,
    timeoutMs: positiveNumber("timeoutMs", config.timeoutMs, 180_000),
    maxOutputChars: positiveInteger("maxOutputChars", config.maxOutputChars, 50_000),
    outputHeadFraction: fraction("outputHeadFraction", config.outputHeadFraction, 0.4),
    killGraceMs: positiveNumber("killGraceMs", config.killGraceMs, 1000),
    initTimeoutMs: positiveNumber("initTimeoutMs", config.initTimeoutMs, 30_000),
    warn,
  };
  if (config.resume !== undefined) options.resume = resumeState(config.resume);
  return options;
}

function resumeState(value: unknown): SessionState {
  const state = plainObject("resume", value);
  if (typeof state.sessionId !== "string" || !/^[0-9a-f]{12}$/.test(state.sessionId)) {
    throw new InvalidOptionError("resume.sessionId", `resume.sessionId must be 12 hex digits, got ${describe(state.sessionId)}`);
  }
  if (typeof state.snapshotReady !== "boolean") {
    throw new InvalidOptionError("resume.snapshotReady", `resume.snapshotReady must be a boolean, got ${describe(state.snapshotReady)}`);
  }
  return { sessionId: state.sessionId, cwd: optionalShellString("resume.cwd", state.cwd) ?? "~", snapshotReady: state.snapshotReady };
}

function apptainerTransport(raw: Record<string, unknown>): ApptainerTransport {
  rejectUnknown("apptainer backend", raw, [
    ...COMMON_KEYS,
    ...["image", "executable", "binds", "overlay", "homeDir", "cpus", "memoryMiB", "scratchDir", "cacheDir", "env", "startTimeoutMs"],
  ]);
  const config = raw as unknown as ApptainerConfig;
  const binds = config.binds ?? [];
  if (!Array.isArray(binds)) throw new InvalidOptionError("binds", `binds must be an array of "host[:container[:ro|rw]]" strings, got ${describe(binds)}`);
  return new ApptainerTransport({
    image: shellString("image", config.image),
    executable: optionalShellString("executable", config.executable),
    binds: binds.map((bind, i) => {
      const spec = shellString(`binds[${i}]`, bind);
      if (!/^[^:]+(:[^:]+(:(ro|rw))?)?$/.test(spec)) {
        throw new InvalidOptionError(`binds[${i}]`, `binds[${i}] must look like "host[:container[:ro|rw]]", got ${describe(spec)}`);
      }
      return spec;
    }),
    overlay: optionalShellString("overlay", config.overlay),
    homeDir: optionalShellString("homeDir", config.homeDir),
    cpus: optionalCpus("cpus", config.cpus),
    memoryMiB: config.memoryMiB === undefined ? undefined : positiveInteger("memoryMiB", config.memoryMiB, 1),
    scratchDir: optionalShellString("scratchDir", config.scratchDir) ?? defaultScratchDir(),
    cacheDir: optionalShellString("cacheDir", config.cacheDir),
    env: stringRecord("env", config.env),
    startTimeoutMs: positiveNumber("startTimeoutMs", config.startTimeoutMs, 300_000),
  });
}

function optionalCpus(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new InvalidOptionError(name, `${name} must be a positive number of CPUs, got ${describe(value)}`);
  }
  return value;
}

function modalTransport(raw: Record<string, unknown>, warn: (message: string) => void): ModalTransport {
  rejectUnknown("modal backend", raw, [...COMMON_KEYS, ...["image", "addPython", "appName", "cpu", "memoryMiB", "lifetimeMs", "idleTimeoutMs", "env", "client", "sync"]]);
  const config = raw as unknown as ModalConfig;
  if (config.addPython !== undefined && typeof config.addPython !== "boolean" && config.addPython !== "auto") {
    throw new InvalidOptionError("addPython", `addPython must be true, false or "auto", got ${describe(config.addPython)}`);
  }
  return new ModalTransport({
    image: optionalShellString("image", config.image) ?? "debian:bookworm-slim",
    addPython: config.addPython ?? "auto",
    appName: optionalShellString("appName", config.appName) ?? "shellwright",
    cpu: optionalCpus("cpu", config.cpu),
    memoryMiB: config.memoryMiB === undefined ? undefined : positiveInteger("memoryMiB", config.memoryMiB, 1),
    lifetimeMs: positiveNumber("lifetimeMs", config.lifetimeMs, 3_600_000),
    idleTimeoutMs: config.idleTimeoutMs === undefined ? undefined : positiveNumber("idleTimeoutMs", config.idleTimeoutMs, 1),
    env: stringRecord("env", config.env),
    client: sdkClient<ModalApi>("client", config.client, ["apps", "images", "sandboxes"]),
    execTimeoutMarginMs: 30_000,
    sync: normalizeSyncConfig("sync", config.sync),
    warn,
  });
}

/** An injected SDK client: checked for the services the backend calls, so a wrong object fails here. */
function sdkClient<T>(name: string, value: unknown, services: string[]): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null) throw new InvalidOptionError(name, `${name} must be an SDK client object, got ${describe(value)}`);
  for (const service of services) {
    if (!(service in value)) throw new InvalidOptionError(name, `${name} must be an SDK client with \`${service}\`; it has none`);
  }
  return value as T;
}

const DAYTONA_KEYS = ["image", "snapshot", "name", "labels", "cpu", "memoryGiB", "diskGiB", "autoStopMinutes", "env", "onClose", "startTimeoutMs", "client", "sync"];

function daytonaTransport(raw: Record<string, unknown>, warn: (message: string) => void): DaytonaTransport {
  rejectUnknown("daytona backend", raw, [...COMMON_KEYS, ...DAYTONA_KEYS]);
  const config = raw as unknown as DaytonaConfig;
  if (config.image !== undefined && config.snapshot !== undefined) {
    throw new InvalidOptionError("snapshot", `Pass image or snapshot, not both (got image ${describe(config.image)} and snapshot ${describe(config.snapshot)})`);
  }
  const labels = stringMap("labels", config.labels);
  const name = optionalShellString("name", config.name);
  const onClose = config.onClose ?? (name !== undefined || Object.keys(labels).length > 0 ? "stop" : "delete");
  if (!["delete", "stop", "keep"].includes(onClose)) {
    throw new InvalidOptionError("onClose", `onClose must be "delete", "stop" or "keep", got ${describe(onClose)}`);
  }
  if (config.autoStopMinutes !== undefined && (typeof config.autoStopMinutes !== "number" || !Number.isInteger(config.autoStopMinutes) || config.autoStopMinutes < 0)) {
    throw new InvalidOptionError("autoStopMinutes", `autoStopMinutes must be a whole number of minutes, 0 or more, got ${describe(config.autoStopMinutes)}`);
  }
  return new DaytonaTransport({
    image: optionalShellString("image", config.image),
    snapshot: optionalShellString("snapshot", config.snapshot),
    name,
    labels,
    cpu: optionalCpus("cpu", config.cpu),
    memoryGiB: config.memoryGiB === undefined ? undefined : positiveInteger("memoryGiB", config.memoryGiB, 1),
    diskGiB: config.diskGiB === undefined ? undefined : positiveInteger("diskGiB", config.diskGiB, 1),
    autoStopMinutes: config.autoStopMinutes,
    env: stringRecord("env", config.env),
    onClose,
    client: sdkClient<DaytonaApi>("client", config.client, ["create", "get", "list"]),
    serverTimeoutMarginMs: 30_000,
    startTimeoutSec: Math.ceil(positiveNumber("startTimeoutMs", config.startTimeoutMs, 300_000) / 1000),
    sync: normalizeSyncConfig("sync", config.sync),
    warn,
  });
}

/** Labels: any string keys (unlike environment variable names), string values. */
function stringMap(name: string, value: unknown): Record<string, string> {
  const record = plainObject(name, value);
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(record)) {
    if (typeof item !== "string") throw new InvalidOptionError(`${name}.${key}`, `${name}.${key} must be a string, got ${describe(item)}`);
    out[key] = item;
  }
  return out;
}
