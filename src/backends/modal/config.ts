/**
 * The modal backend's config: its public type, the option names it accepts
 * and their validation, in one place. Importing it never loads the `modal`
 * package (the transport loads it at the first sandbox).
 */

import { InvalidOptionError } from "../../core/errors.js";
import {
  optionalBoolean,
  describe,
  optionalShellString,
  optionalPositiveInteger,
  optionalPositiveNumber,
  positiveNumber,
  rejectUnknown,
  stringRecord,
} from "../../core/options.js";
import { normalizeSyncConfig, type SyncConfig } from "../../sync/options.js";
import { optionKeys, type CommonConfig } from "../shared/config.js";
import { portList } from "../shared/port-list.js";
import { optionalCpus, spelling } from "../shared/resource-options.js";
import { sdkClient } from "../shared/sdk-client.js";
import type { ModalApi, ModalTransportOptions } from "./transport.js";

export interface ModalConfig extends CommonConfig {
  backend: "modal";
  /** A registry image or a Modal image id (`im-…`). @default "debian:bookworm-slim" */
  image?: string;
  /** Add Python to the image; "auto" adds it to ubuntu/debian registry images. @default "auto" */
  addPython?: boolean | "auto";
  /** The Modal app the sandbox belongs to (created when missing). @default "shellwright" */
  appName?: string;
  /** CPU cores reserved (fractional allowed). @default Modal's default */
  cpus?: number;
  /** @deprecated use cpus (the same number) */
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
  /** Run calls through the fast-path helper, one long-lived exec in the sandbox (docs/fast-path.md); false: one exec per call. @default true */
  fastPath?: boolean;
  /** Ports given a public HTTPS tunnel when the sandbox is created, for `portUrl(env, port)`. @default none */
  ports?: number[];
}

export const MODAL_KEYS = optionKeys<ModalConfig>()([
  "image",
  "addPython",
  "appName",
  "cpus",
  "cpu",
  "memoryMiB",
  "lifetimeMs",
  "idleTimeoutMs",
  "env",
  "client",
  "sync",
  "fastPath",
  "ports",
]);

export function normalizeModalConfig(
  raw: Record<string, unknown>,
  warn: (message: string) => void,
): ModalTransportOptions {
  rejectUnknown("modal backend", raw, MODAL_KEYS);
  if (raw.addPython !== undefined && typeof raw.addPython !== "boolean" && raw.addPython !== "auto") {
    throw new InvalidOptionError(
      "addPython",
      `addPython must be true, false or "auto", got ${describe(raw.addPython)}`,
    );
  }
  const cpus = spelling(raw, "cpus", "cpu", warn, " (the same number)");
  return {
    image: optionalShellString("image", raw.image) ?? "debian:bookworm-slim",
    addPython: (raw.addPython as boolean | "auto" | undefined) ?? "auto",
    appName: optionalShellString("appName", raw.appName) ?? "shellwright",
    cpu: optionalCpus(cpus.name, cpus.value),
    memoryMiB: optionalPositiveInteger("memoryMiB", raw.memoryMiB),
    lifetimeMs: positiveNumber("lifetimeMs", raw.lifetimeMs, 3_600_000),
    idleTimeoutMs: optionalPositiveNumber("idleTimeoutMs", raw.idleTimeoutMs),
    env: stringRecord("env", raw.env),
    client: sdkClient<ModalApi>("client", raw.client, ["apps", "images", "sandboxes"]),
    execTimeoutMarginMs: 30_000,
    sync: normalizeSyncConfig("sync", raw.sync),
    fastPath: optionalBoolean("fastPath", raw.fastPath),
    ports: portList("ports", raw.ports),
    warn,
  };
}
