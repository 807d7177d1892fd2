/**
 * How the SDK backends (Modal, Daytona) move files for FileSync: the SDK's
 * own filesystem API for the bytes, and one small control script per step
 * for what that API lacks (modes, recursive deletes). FileSync decides what
 * to transfer; this only moves it.
 */

import { readFile } from "node:fs/promises";
import { dirname } from "node:path/posix";
import { shellQuote } from "../../core/script.js";
import type { DirectoryMirror, FileUpload, SyncTransfer } from "../../sync/types.js";
import type { ControlExec } from "./remote-tree.js";

/** One file for the SDK to write: its bytes and absolute destination. */
export interface SandboxWrite {
  remote: string;
  bytes: Buffer;
}

export interface SandboxFileApi {
  /** Writes files whose parent directories exist (one SDK call each, or one bulk call). */
  writeFiles(files: readonly SandboxWrite[]): Promise<void>;
  /** Runs a control script in the sandbox. */
  exec: ControlExec;
}

export class SdkTransfer implements SyncTransfer {
  readonly #api: SandboxFileApi;
  #home: Promise<string> | undefined;

  constructor(api: SandboxFileApi) {
    this.#api = api;
  }

  async makeDirectories(paths: readonly string[]): Promise<void> {
    const absolute = await Promise.all(paths.map((path) => this.#absolute(path)));
    await this.#run(`mkdir -p -- ${absolute.map(shellQuote).join(" ")}`);
  }

  async uploadFiles(files: readonly FileUpload[]): Promise<void> {
    const writes = await Promise.all(
      files.map(async (file) => ({
        remote: await this.#absolute(file.remote),
        bytes: await readFile(file.local),
        mode: file.mode,
      })),
    );
    await this.#api.writeFiles(writes);
    await this.#run(writes.map((w) => `chmod ${modeString(w.mode)} -- ${shellQuote(w.remote)}`).join("\n"));
  }

  async removeFiles(paths: readonly string[]): Promise<void> {
    const absolute = await Promise.all(paths.map((path) => this.#absolute(path)));
    await this.#run(`rm -f -- ${absolute.map(shellQuote).join(" ")}`);
  }

  async mirrorDirectory(mirror: DirectoryMirror): Promise<void> {
    const root = await this.#absolute(mirror.remote);
    const uploads = mirror.full ? mirror.entries : mirror.changed;
    const prepare: string[] = [];
    // Nothing is known about the remote tree: start it empty, so no extra survives.
    if (mirror.full) prepare.push(`rm -rf -- ${shellQuote(root)}`);
    for (const path of mirror.removed) prepare.push(`rm -f -- ${shellQuote(`${root}/${path}`)}`);
    const directories = new Set([root, ...uploads.map((entry) => dirname(`${root}/${entry.path}`))]);
    prepare.push(`mkdir -p -- ${[...directories].map(shellQuote).join(" ")}`);
    await this.#run(prepare.join("\n"));
    if (uploads.length === 0) return;
    const writes = await Promise.all(
      uploads.map(async (entry) => ({
        remote: `${root}/${entry.path}`,
        bytes: await readFile(`${mirror.local}/${entry.path}`),
        mode: entry.mode,
      })),
    );
    await this.#api.writeFiles(writes);
    await this.#run(writes.map((w) => `chmod ${modeString(w.mode)} -- ${shellQuote(w.remote)}`).join("\n"));
  }

  /** Relative remote paths are relative to the sandbox user's home, asked for once. */
  async #absolute(path: string): Promise<string> {
    if (path.startsWith("/")) return path;
    this.#home ??= this.#api.exec('printf %s "$HOME"').then((r) => {
      if (r.exitCode !== 0 || !r.output.startsWith("/"))
        throw new Error(`could not find the sandbox's home directory: ${r.output.trim()}`);
      return r.output;
    });
    const home = await this.#home.catch((error: unknown) => {
      this.#home = undefined;
      throw error;
    });
    return path === "." ? home : `${home.replace(/\/$/, "")}/${path}`;
  }

  /** Runs the script's lines in batches, each small enough for any argv. */
  async #run(script: string): Promise<void> {
    let batch: string[] = [];
    let size = 0;
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const result = await this.#api.exec(`set -e\n${batch.join("\n")}`);
      if (result.exitCode !== 0) throw new Error(`exit ${result.exitCode}: ${result.output.trim().slice(0, 500)}`);
      batch = [];
      size = 0;
    };
    for (const line of script.split("\n")) {
      if (size + line.length > MAX_SCRIPT_BATCH) await flush();
      batch.push(line);
      size += line.length + 1;
    }
    await flush();
  }
}

/** Control scripts stay well under Modal's 64 KiB argv cap. */
const MAX_SCRIPT_BATCH = 30_000;

const modeString = (mode: number): string => (mode & 0o7777).toString(8).padStart(4, "0");
