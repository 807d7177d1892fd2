/**
 * How the SSH backend moves files for FileSync: rsync over the session's
 * master connection (so a transfer opens no new TCP connection and does no
 * new key exchange), `mkdir -p` and `rm -f` as one remote command each.
 * rsync must be installed on both ends.
 */

import { spawn } from "node:child_process";
import { shellQuote } from "../../core/script.js";
import type { DirectoryMirror, FileUpload, SyncTransfer } from "../../sync/types.js";
import { sshOptions, type SshTarget } from "./command.js";
import type { ExecResult } from "./exec.js";
import { FileSync } from "../../sync/file-sync.js";
import type { NormalizedSyncConfig } from "../../sync/options.js";

export interface RsyncTransferOptions {
  rsyncPath: string;
  sshPath: string;
  target: SshTarget;
  /** Runs a remote shell command over the master; throws when it fails. */
  run(command: string): Promise<void>;
}

/**
 * The session's FileSync: rsync over its master, and `exec` (a remote command over the master) for the rest, whose
 * failure names the command and `where` it ran.
 */
export function rsyncFileSync(
  config: NormalizedSyncConfig,
  options: {
    rsyncPath: string;
    sshPath: string;
    target: SshTarget;
    where: string;
    exec(command: string): Promise<ExecResult>;
  },
): FileSync {
  const transfer = new RsyncTransfer({
    ...options,
    run: async (command) => {
      const r = await options.exec(command);
      if (r.code !== 0)
        throw new Error(
          `\`${command.slice(0, 200)}\` failed on ${options.where} (exit ${r.code}): ${(r.stderr || r.stdout).trim().slice(0, 500)}`,
        );
    },
  });
  return new FileSync(transfer, { ...config, backend: "ssh" });
}

/** A transfer that makes no progress for this long is given up (rsync --timeout). */
const RSYNC_IO_TIMEOUT_S = 30;
/** And one that takes longer than this in all. */
const RSYNC_TOTAL_TIMEOUT_MS = 600_000;

export class RsyncTransfer implements SyncTransfer {
  readonly #options: RsyncTransferOptions;

  constructor(options: RsyncTransferOptions) {
    this.#options = options;
  }

  async makeDirectories(paths: readonly string[]): Promise<void> {
    await this.#options.run(`mkdir -p -- ${paths.map(quoteRemote).join(" ")}`);
  }

  async uploadFiles(files: readonly FileUpload[]): Promise<void> {
    // Each file has its own destination name and mode: one rsync each. Only
    // changed files get here, so this is rare after the first sync. -I: FileSync
    // already saw the change; rsync's own quick check compares whole seconds and
    // would skip a same-size rewrite within the same second.
    for (const file of files) {
      await this.#rsync([
        "-Ipt",
        `--chmod=F${file.mode.toString(8).padStart(4, "0")}`,
        "--",
        file.local,
        this.#destination(file.remote),
      ]);
    }
  }

  async removeFiles(paths: readonly string[]): Promise<void> {
    await this.#options.run(`rm -f -- ${paths.map(quoteRemote).join(" ")}`);
  }

  async mirrorDirectory(mirror: DirectoryMirror): Promise<void> {
    // rsync walks both trees itself, so `changed` and `removed` are not needed:
    // its quick check (size + mtime, kept by -t) skips unchanged files, and
    // --delete removes what the local tree no longer has. --modify-window=-1
    // compares mtimes to the nanosecond, as FileSync does (by default rsync
    // compares whole seconds and misses a same-size edit made within one).
    // -rpt without -l: symbolic links are skipped, as FileSync's fingerprint skips them.
    await this.#rsync([
      "-rpt",
      "--modify-window=-1",
      "--delete",
      "--",
      `${mirror.local.replace(/\/+$/, "")}/`,
      `${this.#destination(mirror.remote)}/`,
    ]);
  }

  #destination(remote: string): string {
    const host = this.#options.target.host.includes(":") ? `[${this.#options.target.host}]` : this.#options.target.host;
    return `${host}:${remote}`;
  }

  #rsync(args: string[]): Promise<void> {
    const { rsyncPath, sshPath, target } = this.#options;
    const shell = [sshPath, ...sshOptions(target)].map(quoteForRsync).join(" ");
    const argv = ["-q", `--timeout=${RSYNC_IO_TIMEOUT_S}`, "-e", shell, ...args];
    return new Promise((resolve, reject) => {
      const child = spawn(rsyncPath, argv, { stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      const keep = (chunk: Buffer): void => {
        if (output.length < 4000) output += chunk.toString("utf8");
      };
      child.stdout.on("data", keep);
      child.stderr.on("data", keep);
      const timer = setTimeout(() => child.kill("SIGKILL"), RSYNC_TOTAL_TIMEOUT_MS);
      child.once("error", (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        const hint =
          error.code === "ENOENT"
            ? ` (${rsyncPath} was not found: install rsync, e.g. apt-get install rsync, on this machine and on the host)`
            : "";
        reject(new Error(`Could not run ${rsyncPath}: ${error.message}${hint}`));
      });
      child.once("close", (code, signal) => {
        clearTimeout(timer);
        if (code === 0) return resolve();
        const hint = code === 127 || /command not found/.test(output) ? " (is rsync installed on the host?)" : "";
        reject(
          new Error(
            `rsync to ${args.at(-1)} failed (${signal ?? `exit ${code}`})${hint}: ${output.trim().slice(0, 1000)}`,
          ),
        );
      });
    });
  }
}

/** A remote path for a shell command run in the remote home: relative paths stay relative. */
function quoteRemote(path: string): string {
  return shellQuote(path);
}

/** rsync splits its -e string on spaces and honours quotes, but has no escape for a quote inside quotes. */
function quoteForRsync(arg: string): string {
  if (/^[\w@%+=:,./-]+$/.test(arg)) return arg;
  return arg.includes("'") ? `"${arg}"` : `'${arg}'`;
}
