/**
 * The daytona backend's config: its public type, the option names it accepts
 * and their validation, in one place. Importing it never loads
 * `@daytonaio/sdk` (the transport loads it at the first sandbox).
 */

import { InvalidOptionError } from "../../core/errors.js";
import {
  optionalBoolean,
  describe,
  optionalShellString,
  plainObject,
  optionalPositiveInteger,
  positiveNumber,
  rejectUnknown,
  stringRecord,
} from "../../core/options.js";
import { normalizeSyncConfig, type SyncConfig } from "../../sync/options.js";
import { optionKeys, type CommonConfig, type PoolRefusal } from "../shared/config.js";
import { optionalCpus, spelling } from "../shared/resource-options.js";
import { sdkClient } from "../shared/sdk-client.js";
import type { DaytonaApi, DaytonaTransportOptions } from "./transport.js";

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
  cpus?: number;
  /** @deprecated use cpus (the same number) */
  cpu?: number;
  /** Memory of a new sandbox, in MiB: a whole number of GiB (a multiple of 1024), which is what Daytona takes. @default Daytona's default */
  memoryMiB?: number;
  /** @deprecated use memoryMiB (memoryGiB: 4 is memoryMiB: 4096) */
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
  /** Run calls through the fast-path helper, one long-lived session command (docs/fast-path.md); false: one session command per call. @default true */
  fastPath?: boolean;
}

export const DAYTONA_KEYS = optionKeys<DaytonaConfig>()([
  "image",
  "snapshot",
  "name",
  "labels",
  "cpus",
  "cpu",
  "memoryMiB",
  "memoryGiB",
  "diskGiB",
  "autoStopMinutes",
  "env",
  "onClose",
  "startTimeoutMs",
  "client",
  "sync",
  "fastPath",
]);

const MIB_PER_GIB = 1024;

export function normalizeDaytonaConfig(
  raw: Record<string, unknown>,
  warn: (message: string) => void,
): DaytonaTransportOptions {
  rejectUnknown("daytona backend", raw, DAYTONA_KEYS);
  if (raw.image !== undefined && raw.snapshot !== undefined) {
    throw new InvalidOptionError(
      "snapshot",
      `Pass image or snapshot, not both (got image ${describe(raw.image)} and snapshot ${describe(raw.snapshot)})`,
    );
  }
  const labels = stringMap("labels", raw.labels);
  const name = optionalShellString("name", raw.name);
  const onClose = raw.onClose ?? (name !== undefined || Object.keys(labels).length > 0 ? "stop" : "delete");
  if (onClose !== "delete" && onClose !== "stop" && onClose !== "keep") {
    throw new InvalidOptionError("onClose", `onClose must be "delete", "stop" or "keep", got ${describe(onClose)}`);
  }
  const autoStopMinutes = raw.autoStopMinutes;
  if (
    autoStopMinutes !== undefined &&
    (typeof autoStopMinutes !== "number" || !Number.isInteger(autoStopMinutes) || autoStopMinutes < 0)
  ) {
    throw new InvalidOptionError(
      "autoStopMinutes",
      `autoStopMinutes must be a whole number of minutes, 0 or more, got ${describe(autoStopMinutes)}`,
    );
  }
  const cpus = spelling(raw, "cpus", "cpu", warn, " (the same number)");
  const memory = spelling(raw, "memoryMiB", "memoryGiB", warn, " (memoryGiB: 4 is memoryMiB: 4096)");
  return {
    image: optionalShellString("image", raw.image),
    snapshot: optionalShellString("snapshot", raw.snapshot),
    name,
    labels,
    cpu: optionalCpus(cpus.name, cpus.value),
    memoryGiB: memory.deprecated
      ? optionalPositiveInteger(memory.name, memory.value)
      : wholeGiB(memory.name, memory.value),
    diskGiB: optionalPositiveInteger("diskGiB", raw.diskGiB),
    autoStopMinutes,
    env: stringRecord("env", raw.env),
    onClose,
    client: sdkClient<DaytonaApi>("client", raw.client, ["create", "get", "list"]),
    serverTimeoutMarginMs: 30_000,
    startTimeoutSec: Math.ceil(positiveNumber("startTimeoutMs", raw.startTimeoutMs, 300_000) / 1000),
    sync: normalizeSyncConfig("sync", raw.sync),
    fastPath: optionalBoolean("fastPath", raw.fastPath),
    warn,
  };
}

/** Daytona's API takes memory as a whole number of GiB, so a MiB value must be a multiple of 1024. */
function wholeGiB(name: string, value: unknown): number | undefined {
  const mib = optionalPositiveInteger(name, value);
  if (mib === undefined) return undefined;
  if (mib % MIB_PER_GIB !== 0) {
    throw new InvalidOptionError(
      name,
      `${name} must be a whole number of GiB (a multiple of 1024) for Daytona, got ${describe(value)}`,
    );
  }
  return mib / MIB_PER_GIB;
}

/** Labels: any string keys (unlike environment variable names), string values. */
function stringMap(name: string, value: unknown): Record<string, string> {
  const record = plainObject(name, value);
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(record)) {
    if (typeof item !== "string")
      throw new InvalidOptionError(`${name}.${key}`, `${name}.${key} must be a string, got ${describe(item)}`);
    out[key] = item;
  }
  return out;
}

/** What a warm pool refuses of a Daytona config (docs/pools.md). */
export const DAYTONA_POOL_REFUSED: readonly PoolRefusal[] = [
  { key: "name", why: "every member needs a sandbox of its own, not one resumed by name" },
  {
    key: "labels",
    why: "every member needs a sandbox of its own, not one resumed by label",
    refuses: (labels) => typeof labels === "object" && labels !== null && Object.keys(labels).length > 0,
  },
  {
    key: "onClose",
    why: "a released member is deleted, never kept",
    refuses: (onClose) => onClose !== undefined && onClose !== "delete",
  },
];
