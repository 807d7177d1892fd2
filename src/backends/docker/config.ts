/**
 * The docker backend's config: its public type, the option names it accepts
 * and their validation (with the Python system's defaults where they make
 * sense), in one place. run-args.ts turns the result into `docker run`.
 */

import { credentialRefusal, isCredentialEnvVar } from "../../core/credentials.js";
import { InvalidOptionError } from "../../core/errors.js";
import {
  describe,
  describeSecret,
  optionalShellString,
  rejectUnknown,
  shellString,
  stringRecord,
  variableName,
} from "../../core/options.js";
import { optionKeys, type CommonConfig, type PoolRefusal } from "../shared/config.js";
import { portList } from "../shared/port-list.js";
import { spelling } from "../shared/resource-options.js";
import type { DockerCall } from "./engine.js";
import { DOCKER_LABEL } from "./labels.js";

/** Capabilities added back after `--cap-drop ALL`: enough for package installs and file ownership. */
export const DEFAULT_CAP_ADD = ["DAC_OVERRIDE", "CHOWN", "FOWNER", "SETUID", "SETGID"] as const;
export const DEFAULT_PIDS_LIMIT = 256;
/** Where a session keeps its state, its checkpoints and the helper inside the container. */
export const DOCKER_TEMP_DIR = "/tmp";

/** A long-running container; every command is a `docker exec`. */
export interface DockerConfig extends CommonConfig {
  backend: "docker";
  /** @default "/root" ("/workspace" with mountCwd) */
  cwd?: string;
  /** The image to run (it must exist locally or be pullable). Required. */
  image: string;
  /** Host variable names whose values reach the session once, at init (never on a command line). */
  forwardEnv?: string[];
  /** Variables set for the session at init. */
  env?: Record<string, string>;
  /** `docker run -v` specs, `host:container[:opts]`. */
  volumes?: string[];
  /** Mount a host directory at /workspace and start there: `true` for this process's cwd. */
  mountCwd?: boolean | string;
  /** `--cpus`. */
  cpus?: number;
  /** `--memory`, in MiB. @default no limit */
  memoryMiB?: number;
  /** @deprecated use memoryMiB (the same number: docker read `<n>m` as MiB all along) */
  memoryMb?: number;
  /** `--storage-opt size=`, in MiB (needs overlay2 on xfs with pquota). */
  diskMiB?: number;
  /** @deprecated use diskMiB (the same number: docker read `size=<n>m` as MiB all along) */
  diskMb?: number;
  /** `--pids-limit`. @default 256 */
  pidsLimit?: number;
  /** Drop every capability, then add back `capAdd`. @default true */
  dropCapabilities?: boolean;
  /** @default DAC_OVERRIDE CHOWN FOWNER SETUID SETGID (no SETUID/SETGID with runAsHostUser) */
  capAdd?: string[];
  /** `--security-opt no-new-privileges`. @default true */
  noNewPrivileges?: boolean;
  /** `--user <uid>:<gid>` of this process. @default false */
  runAsHostUser?: boolean;
  /** `--init` (tini reaps zombies). @default true */
  init?: boolean;
  /** Network access; false runs with `--network none`. @default true */
  network?: boolean;
  /** Container ports published on this machine's 127.0.0.1 (a free host port each), for `portUrl(env, port)`. */
  ports?: number[];
  /** More `docker run` arguments, placed before the image. */
  extraArgs?: string[];
  /** Reuse the container of this name (started if stopped), or create it with this name. */
  containerName?: string;
  /** Leave the container running on close(). @default true with containerName, else false */
  keepContainer?: boolean;
  /** Extra labels for the container. */
  labels?: Record<string, string>;
  /** The docker CLI, used to create and remove containers. @default "docker" */
  dockerPath?: string;
  /** The Engine API socket, used for every command. @default DOCKER_HOST (unix://) or /var/run/docker.sock */
  socketPath?: string;
  /** Receives every engine call and CLI invocation the backend makes (for debugging and tests). */
  trace?: (call: DockerCall) => void;
  /** Run calls through the fast-path helper, copied into the container once (docs/fast-path.md). @default true */
  fastPath?: boolean;
  /**
   * A directory in the container (its own filesystem, no volume) that checkpoints copy and rollbacks
   * restore (docs/branching.md); without it a checkpoint holds the shell state only.
   */
  workspace?: string;
  /** The largest workspace a checkpoint or fork accepts, in bytes. @default 1 GiB */
  workspaceMaxBytes?: number;
}

export const DOCKER_KEYS = optionKeys<DockerConfig>()([
  "image",
  "forwardEnv",
  "env",
  "volumes",
  "mountCwd",
  "cpus",
  "memoryMiB",
  "memoryMb",
  "diskMiB",
  "diskMb",
  "pidsLimit",
  "dropCapabilities",
  "capAdd",
  "noNewPrivileges",
  "runAsHostUser",
  "init",
  "network",
  "ports",
  "extraArgs",
  "containerName",
  "keepContainer",
  "labels",
  "dockerPath",
  "socketPath",
  "trace",
  "fastPath",
  "workspace",
  "workspaceMaxBytes",
]);

/** Options after validation: defaults filled in. */
export interface DockerTransportOptions {
  image: string;
  forwardEnv: string[];
  env: Record<string, string>;
  volumes: string[];
  /** Absolute host directory mounted at /workspace, if any. */
  mountCwd: string | undefined;
  cpus: number | undefined;
  memoryMiB: number | undefined;
  diskMiB: number | undefined;
  pidsLimit: number | undefined;
  dropCapabilities: boolean;
  capAdd: string[];
  noNewPrivileges: boolean;
  runAsHostUser: boolean;
  init: boolean;
  network: boolean;
  ports: number[];
  extraArgs: string[];
  containerName: string | undefined;
  keepContainer: boolean;
  labels: Record<string, string>;
  dockerPath: string | undefined;
  socketPath: string | undefined;
  trace: ((call: DockerCall) => void) | undefined;
  /** Absent means on. */
  fastPath?: boolean | undefined;
}

export function normalizeDockerConfig(
  raw: Record<string, unknown>,
  warn: (message: string) => void,
  cwd: () => string = () => process.cwd(),
): DockerTransportOptions {
  rejectUnknown("docker backend", raw, DOCKER_KEYS);
  if (raw.image === undefined)
    throw new InvalidOptionError(
      "image",
      'The docker backend needs an image, e.g. { backend: "docker", image: "debian:bookworm" }',
    );
  const image = shellString("image", raw.image);
  if (/\s/.test(image) || image.startsWith("-"))
    throw new InvalidOptionError("image", `image must be an image reference, got ${describe(image)}`);
  const runAsHostUser = bool("runAsHostUser", raw.runAsHostUser, false);
  const containerName = optionalShellString("containerName", raw.containerName);
  if (containerName !== undefined && !/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(containerName)) {
    throw new InvalidOptionError(
      "containerName",
      `containerName must match [a-zA-Z0-9][a-zA-Z0-9_.-]*, got ${describe(containerName)}`,
    );
  }
  let mountCwd: string | undefined;
  if (raw.mountCwd === true) mountCwd = cwd();
  else if (typeof raw.mountCwd === "string") mountCwd = shellString("mountCwd", raw.mountCwd);
  else if (raw.mountCwd !== undefined && raw.mountCwd !== false)
    throw new InvalidOptionError(
      "mountCwd",
      `mountCwd must be a boolean or a host directory, got ${describe(raw.mountCwd)}`,
    );
  if (mountCwd !== undefined && !mountCwd.startsWith("/"))
    throw new InvalidOptionError("mountCwd", `mountCwd must be an absolute host path, got ${describe(mountCwd)}`);

  const forwardEnv = forwardedNames(raw.forwardEnv);
  const volumes = stringList("volumes", raw.volumes);
  for (const volume of volumes) {
    const [host, container] = volume.split(":");
    if (!host || !container?.startsWith("/")) {
      throw new InvalidOptionError(
        "volumes",
        `volumes entries must look like host:/container[:ro], got ${describe(volume)}`,
      );
    }
  }
  const capAdd =
    raw.capAdd === undefined
      ? DEFAULT_CAP_ADD.filter((cap) => !runAsHostUser || (cap !== "SETUID" && cap !== "SETGID"))
      : stringList("capAdd", raw.capAdd);
  for (const cap of capAdd) {
    if (!/^[A-Z_]+$/.test(cap))
      throw new InvalidOptionError(
        "capAdd",
        `capAdd entries must be capability names like NET_ADMIN, got ${describe(cap)}`,
      );
  }
  const labels = stringRecordOfLabels(raw.labels);
  const memory = spelling(raw, "memoryMiB", "memoryMb", warn, " (the same number: docker read it as MiB)");
  const disk = spelling(raw, "diskMiB", "diskMb", warn, " (the same number: docker read it as MiB)");
  const trace = raw.trace;
  if (trace !== undefined && typeof trace !== "function")
    throw new InvalidOptionError("trace", `trace must be a function, got ${describe(trace)}`);

  const network = bool("network", raw.network, true);
  const ports = portList("ports", raw.ports);
  if (ports.length > 0 && !network)
    throw new InvalidOptionError("ports", "ports needs a network: a container with network: false can publish none");
  return {
    image,
    forwardEnv,
    env: stringRecord("env", raw.env),
    volumes,
    mountCwd,
    cpus: positive("cpus", raw.cpus, false),
    memoryMiB: positive(memory.name, memory.value, true),
    diskMiB: positive(disk.name, disk.value, true),
    pidsLimit: raw.pidsLimit === undefined ? DEFAULT_PIDS_LIMIT : positive("pidsLimit", raw.pidsLimit, true),
    dropCapabilities: bool("dropCapabilities", raw.dropCapabilities, true),
    capAdd,
    noNewPrivileges: bool("noNewPrivileges", raw.noNewPrivileges, true),
    runAsHostUser,
    init: bool("init", raw.init, true),
    network,
    ports,
    extraArgs: stringList("extraArgs", raw.extraArgs),
    containerName,
    keepContainer: bool("keepContainer", raw.keepContainer, containerName !== undefined),
    labels,
    dockerPath: optionalShellString("dockerPath", raw.dockerPath),
    socketPath: optionalShellString("socketPath", raw.socketPath),
    trace: trace as DockerTransportOptions["trace"],
    fastPath: bool("fastPath", raw.fastPath, true),
  };
}

function bool(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean")
    throw new InvalidOptionError(name, `${name} must be a boolean, got ${describe(value)}`);
  return value;
}

function positive(name: string, value: unknown, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new InvalidOptionError(
      name,
      `${name} must be a positive ${integer ? "integer" : "number"}, got ${describe(value)}`,
    );
  }
  return value;
}

/** Names of host variables; an entry may hold a value by mistake ("NAME=value"), so none is ever shown whole. */
function forwardedNames(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    throw new InvalidOptionError(
      "forwardEnv",
      `forwardEnv must be an array of variable names, got ${describeSecret(value)}`,
    );
  return value.map((item: unknown, index) => {
    if (typeof item !== "string")
      throw new InvalidOptionError(
        "forwardEnv",
        `forwardEnv[${index}] must be a variable name, got ${describeSecret(item)}`,
      );
    const name = variableName("forwardEnv", item);
    if (isCredentialEnvVar(name)) throw new InvalidOptionError("forwardEnv", credentialRefusal("forwardEnv", name));
    return name;
  });
}

function stringList(name: string, value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    throw new InvalidOptionError(name, `${name} must be an array of strings, got ${describe(value)}`);
  return value.map((item, index) => shellString(`${name}[${index}]`, item));
}

function stringRecordOfLabels(value: unknown): Record<string, string> {
  const labels = value === undefined ? {} : (value as Record<string, unknown>);
  if (typeof labels !== "object" || labels === null || Array.isArray(labels))
    throw new InvalidOptionError("labels", `labels must be an object of strings, got ${describe(value)}`);
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(labels)) {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(key))
      throw new InvalidOptionError("labels", `labels has an invalid key ${describe(key)}`);
    if (key === DOCKER_LABEL || key.startsWith(`${DOCKER_LABEL}.`))
      throw new InvalidOptionError(
        "labels",
        `labels must not set ${describe(key)}: the shellwright labels are set by the backend`,
      );
    out[key] = shellString(`labels.${key}`, item, { allowEmpty: true });
  }
  return out;
}

/** What this backend cannot open without, with a value a user would give (the CLI words a missing one with it). */
export const DOCKER_REQUIRED: Readonly<Record<string, string>> = { image: "debian:bookworm" };

/** What a warm pool refuses of a docker config (docs/pools.md). */
export const DOCKER_POOL_REFUSED: readonly PoolRefusal[] = [
  { key: "containerName", why: "every member needs a container of its own" },
  { key: "keepContainer", why: "a released member's container is removed, never kept" },
];

/** Forwarded host variables (missing or empty ones are skipped) and the configured env, as `NAME=value`. */
export function initEnv(options: Pick<DockerTransportOptions, "forwardEnv" | "env">): string[] {
  const env: string[] = [];
  for (const name of options.forwardEnv) {
    const value = process.env[name];
    if (value !== undefined && value !== "") env.push(`${name}=${value}`);
  }
  for (const [name, value] of Object.entries(options.env)) env.push(`${name}=${value}`);
  return env;
}
