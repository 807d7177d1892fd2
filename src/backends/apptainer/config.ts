/**
 * The apptainer backend's config: its public type, the option names it
 * accepts and their validation, in one place.
 */

import { InvalidOptionError } from "../../core/errors.js";
import {
  optionalBoolean,
  describe,
  optionalShellString,
  optionalPositiveInteger,
  positiveNumber,
  rejectUnknown,
  shellString,
  stringRecord,
} from "../../core/options.js";
import { optionKeys, type CommonConfig } from "../shared/config.js";
import { optionalCpus } from "../shared/resource-options.js";
import { defaultScratchDir, type ApptainerTransportOptions } from "./transport.js";

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
  /** Run calls through the fast-path helper, one long-lived `apptainer exec` (docs/fast-path.md); false: one exec per call. @default true */
  fastPath?: boolean;
}

export const APPTAINER_KEYS = optionKeys<ApptainerConfig>()([
  "image",
  "executable",
  "binds",
  "overlay",
  "homeDir",
  "cpus",
  "memoryMiB",
  "scratchDir",
  "cacheDir",
  "env",
  "startTimeoutMs",
  "fastPath",
]);

export function normalizeApptainerConfig(raw: Record<string, unknown>): ApptainerTransportOptions {
  rejectUnknown("apptainer backend", raw, APPTAINER_KEYS);
  const binds = raw.binds ?? [];
  if (!Array.isArray(binds))
    throw new InvalidOptionError(
      "binds",
      `binds must be an array of "host[:container[:ro|rw]]" strings, got ${describe(binds)}`,
    );
  return {
    image: shellString("image", raw.image),
    executable: optionalShellString("executable", raw.executable),
    binds: binds.map((bind: unknown, i) => {
      const spec = shellString(`binds[${i}]`, bind);
      if (!/^[^:]+(:[^:]+(:(ro|rw))?)?$/.test(spec)) {
        throw new InvalidOptionError(
          `binds[${i}]`,
          `binds[${i}] must look like "host[:container[:ro|rw]]", got ${describe(spec)}`,
        );
      }
      return spec;
    }),
    overlay: optionalShellString("overlay", raw.overlay),
    homeDir: optionalShellString("homeDir", raw.homeDir),
    cpus: optionalCpus("cpus", raw.cpus),
    memoryMiB: optionalPositiveInteger("memoryMiB", raw.memoryMiB),
    scratchDir: optionalShellString("scratchDir", raw.scratchDir) ?? defaultScratchDir(),
    cacheDir: optionalShellString("cacheDir", raw.cacheDir),
    env: stringRecord("env", raw.env),
    startTimeoutMs: positiveNumber("startTimeoutMs", raw.startTimeoutMs, 300_000),
    fastPath: optionalBoolean("fastPath", raw.fastPath),
  };
}

/** What this backend cannot open without, with a value a user would give (the CLI words a missing one with it). */
export const APPTAINER_REQUIRED: Readonly<Record<string, string>> = { image: "docker://debian:bookworm" };
