/**
 * The SSH backend's config: its public type, the option names it accepts and
 * their validation (done once, in createEnvironment), in one place.
 */

import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { InvalidOptionError } from "../../core/errors.js";
import {
  optionalBoolean,
  describe,
  optionalShellString,
  positiveNumber,
  rejectUnknown,
  shellString,
  stringRecord,
} from "../../core/options.js";
import { normalizeSyncConfig, type NormalizedSyncConfig, type SyncConfig } from "../../sync/options.js";
import { optionKeys, type CommonConfig, type PoolRefusal } from "../shared/config.js";
import type { SshTarget } from "./command.js";

/** Where and how to connect (the control socket is made per session), plus what the session needs on the host. */
export interface SshTransportOptions extends Omit<SshTarget, "controlPath" | "sshOptions"> {
  sshOptions: string[];
  /** Variables for the session's first shell, sent in a private file, never on a command line. */
  env: Record<string, string>;
  /** Directory on the host for the session's files; default: a new private one under the host's temp dir. */
  remoteTempDir?: string | undefined;
  sync?: NormalizedSyncConfig | undefined;
  sshPath: string;
  rsyncPath: string;
  warn: (message: string) => void;
  /** Leave the remote processes and directory alone when this process dies without close() (CLI named sessions). */
  outliveOwner?: boolean | undefined;
  /** Run calls through the fast-path helper on the host when it can run there (docs/fast-path.md); default true. */
  fastPath?: boolean | undefined;
  /** The helper to copy to the host; default: the static one built into this package (tests point it elsewhere). */
  fastPathHelper?: string | undefined;
  /** Start from this process's capture of the same origin's login (core/login-snapshots.ts); default true. */
  reuseLoginSnapshot?: boolean | undefined;
}

export interface SshConfig extends CommonConfig {
  backend: "ssh";
  /** Host name or address (an alias from ~/.ssh/config works too). */
  host: string;
  /** @default ssh's own default (ssh_config, then the local user name) */
  user?: string;
  /** @default ssh's own default (ssh_config, then 22) */
  port?: number;
  /** Private key file; ssh then offers only this key (IdentitiesOnly). A key with a passphrase needs ssh-agent. */
  keyPath?: string;
  /** known_hosts file to check the host key against. @default ssh's own (~/.ssh/known_hosts) */
  knownHostsFile?: string;
  /** @default "accept-new": a new host is trusted on first use, a changed key is refused */
  strictHostKeyChecking?: "yes" | "accept-new" | "no";
  /** More `-o` options for ssh, as "Key=Value" (for example "ProxyJump=bastion"). */
  sshOptions?: string[];
  /** @default 10000 */
  connectTimeoutMs?: number;
  /** How long the master connection stays up after the last command, if the session is not closed. @default 300000 */
  controlPersistMs?: number;
  /** Variables for the session's first shell on the host; sent in a private file (0600), never on a command line. */
  env?: Record<string, string>;
  /** Directory on the host for the session's snapshot (set it to resume a session from another process). @default a new private directory under $TMPDIR or /tmp, removed at close */
  remoteTempDir?: string;
  /** Files and directories mirrored into the host before commands (rsync over the master). */
  sync?: SyncConfig;
  /** @default "ssh" */
  sshPath?: string;
  /** @default "rsync" */
  rsyncPath?: string;
  /**
   * Keep the remote processes and directory when this process exits or dies
   * without close(), for another process to reattach (the CLI's named
   * sessions); the master connection still closes. By default a watchdog
   * ends them. @default false
   */
  outliveOwner?: boolean;
  /**
   * Run calls through the session's fast-path helper on the host
   * (docs/fast-path.md): copied once into the session's directory, then one
   * long-lived channel over the master carries every call. Only on hosts of
   * this machine's architecture (else, or where it cannot run: the plain
   * path). false: every
   * call is its own `ssh` command (the plain model). @default true
   */
  fastPath?: boolean;
  /**
   * Start each session from this process's capture of the login shell
   * (`bash -l`) of the same origin (user, machine, environment, cwd) while
   * the profile files are unchanged, instead of running the login again: a
   * slow profile is paid once per origin, not once per session or pool
   * member (docs/persistence.md). false: every session runs its own login.
   * @default true
   */
  reuseLoginSnapshot?: boolean;
}

export const SSH_KEYS = optionKeys<SshConfig>()([
  "host",
  "user",
  "port",
  "keyPath",
  "knownHostsFile",
  "strictHostKeyChecking",
  "sshOptions",
  "connectTimeoutMs",
  "controlPersistMs",
  "outliveOwner",
  "env",
  "remoteTempDir",
  "sync",
  "sshPath",
  "rsyncPath",
  "fastPath",
  "reuseLoginSnapshot",
]);

/** Options the transport sets itself; ssh keeps the first value it sees, so a later one would be silently ignored. */
const RESERVED_SSH_OPTIONS = ["controlpath", "controlmaster", "controlpersist", "batchmode"];

export function normalizeSshConfig(raw: Record<string, unknown>, warn: (message: string) => void): SshTransportOptions {
  rejectUnknown("ssh backend", raw, SSH_KEYS);
  const host = shellString("host", raw.host);
  if (/\s/.test(host) || host.startsWith("-"))
    throw new InvalidOptionError(
      "host",
      `host must be a host name or address (no spaces, no leading "-"), got ${describe(raw.host)}`,
    );
  const user = optionalShellString("user", raw.user);
  if (user !== undefined && (/\s/.test(user) || user.startsWith("-")))
    throw new InvalidOptionError(
      "user",
      `user must be a user name (no spaces, no leading "-"), got ${describe(raw.user)}`,
    );
  let port: number | undefined;
  if (raw.port !== undefined) {
    if (typeof raw.port !== "number" || !Number.isInteger(raw.port) || raw.port < 1 || raw.port > 65535) {
      throw new InvalidOptionError("port", `port must be an integer from 1 to 65535, got ${describe(raw.port)}`);
    }
    port = raw.port;
  }
  const strict = raw.strictHostKeyChecking ?? "accept-new";
  if (strict !== "yes" && strict !== "accept-new" && strict !== "no") {
    throw new InvalidOptionError(
      "strictHostKeyChecking",
      `strictHostKeyChecking must be "yes", "accept-new" or "no", got ${describe(strict)}`,
    );
  }
  const options: string[] = [];
  if (raw.sshOptions !== undefined) {
    if (!Array.isArray(raw.sshOptions))
      throw new InvalidOptionError(
        "sshOptions",
        `sshOptions must be an array of "Key=Value" strings, got ${describe(raw.sshOptions)}`,
      );
    raw.sshOptions.forEach((item: unknown, index) => {
      const name = `sshOptions[${index}]`;
      const option = shellString(name, item);
      const match = /^([A-Za-z][A-Za-z0-9]*)[= ]\S/.exec(option);
      if (!match || /[\n\r]/.test(option))
        throw new InvalidOptionError(name, `${name} must look like "Key=Value", got ${describe(item)}`);
      if (RESERVED_SSH_OPTIONS.includes(match[1]!.toLowerCase())) {
        throw new InvalidOptionError(
          name,
          `${name} sets ${match[1]}, which the ssh backend manages itself (one private master connection per session, no prompts); remove it`,
        );
      }
      options.push(option);
    });
  }
  return {
    host,
    user,
    port,
    keyPath: existingKey(raw.keyPath),
    knownHostsFile: optionalShellString("knownHostsFile", raw.knownHostsFile),
    strictHostKeyChecking: strict,
    sshOptions: options,
    connectTimeoutMs: positiveNumber("connectTimeoutMs", raw.connectTimeoutMs, 10_000),
    controlPersistSeconds: Math.max(
      1,
      Math.ceil(positiveNumber("controlPersistMs", raw.controlPersistMs, 300_000) / 1000),
    ),
    env: stringRecord("env", raw.env),
    remoteTempDir: remoteDir(raw.remoteTempDir),
    sync: normalizeSyncConfig("sync", raw.sync),
    sshPath: optionalShellString("sshPath", raw.sshPath) ?? "ssh",
    rsyncPath: optionalShellString("rsyncPath", raw.rsyncPath) ?? "rsync",
    outliveOwner: optionalBoolean("outliveOwner", raw.outliveOwner),
    fastPath: optionalBoolean("fastPath", raw.fastPath),
    reuseLoginSnapshot: optionalBoolean("reuseLoginSnapshot", raw.reuseLoginSnapshot),
    warn,
  };
}

/**
 * A key that is not there would cost a whole connection attempt (seconds)
 * and end in ssh's own warning; ssh expands a leading `~/` itself, so the
 * check does too.
 */
function existingKey(value: unknown): string | undefined {
  const keyPath = optionalShellString("keyPath", value);
  if (keyPath === undefined) return undefined;
  const local = keyPath.startsWith("~/") ? join(homedir(), keyPath.slice(2)) : keyPath;
  try {
    accessSync(local, fsConstants.R_OK);
    if (statSync(local).isDirectory()) throw Object.assign(new Error("a directory"), { code: "EISDIR" });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "does not exist" : code === "EISDIR" ? "is a directory" : "cannot be read";
    throw new InvalidOptionError(
      "keyPath",
      `keyPath ${describe(keyPath)} ${why} on this machine; give the path of a private key file readable by this user (e.g. ~/.ssh/id_ed25519)`,
    );
  }
  return keyPath;
}

function remoteDir(value: unknown): string | undefined {
  const dir = optionalShellString("remoteTempDir", value);
  if (dir !== undefined && (!dir.startsWith("/") || /[\n\r]/.test(dir))) {
    throw new InvalidOptionError(
      "remoteTempDir",
      `remoteTempDir must be an absolute path on the host, got ${describe(value)}`,
    );
  }
  return dir;
}

/** What this backend cannot open without, with a value a user would give (the CLI words a missing one with it). */
export const SSH_REQUIRED: Readonly<Record<string, string>> = { host: "example.com" };

/** What a warm pool refuses of an ssh config (docs/pools.md). */
export const SSH_POOL_REFUSED: readonly PoolRefusal[] = [
  { key: "outliveOwner", why: "a pool's members end with their owner" },
];
