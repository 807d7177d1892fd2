/**
 * At close, a sandboxed session's changes to its workspace are written into
 * the host directory (docs/branching.md): what the session sees last is
 * what the directory holds afterwards. Only what some layer holds is
 * visited, so unchanged files are neither read nor copied: in each
 * directory a layer touched, a name the overlay no longer shows is removed
 * from the host (a deletion, a rename's old name, a directory replaced), a
 * name a layer holds is copied from the overlay's view with `cp -a` (or, for
 * a directory on both sides, visited), and the directory's own mode, owner
 * and times are copied last. The overlay's view is read through the
 * sandbox's init (/proc/<pid>/root), with every process of the session ended.
 */

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, rmSync, utimesSync, type Stats } from "node:fs";
import { basename, join } from "node:path";
import { CheckpointError } from "../../../core/errors.js";

/** Most names one `cp` is given (its argv stays far below the kernel's limit). */
const BATCH = 200;

/** Applies what `layers` (the overlay's layer dirs) changed to `host`, reading the result from `merged`. */
export async function writeBack(merged: string, host: string, layers: string[]): Promise<void> {
  await sync(merged, host, layers, "");
  copyAttributes(lstatSync(merged), host);
}

async function sync(merged: string, host: string, layers: string[], rel: string): Promise<void> {
  const touched = new Set<string>();
  let held = false;
  for (const layer of layers) {
    const dir = join(layer, rel);
    if (lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() !== true) continue;
    held = true;
    for (const name of readdirSync(dir)) touched.add(name);
  }
  // Held empty, it may still hide all the host has there: a directory removed and made again is opaque.
  if (!held) return;
  const shown = new Set(readdirSync(join(merged, rel)));
  const copies: string[] = [];
  for (const name of readdirSync(join(host, rel))) if (!shown.has(name)) rm(join(host, rel, name));
  for (const name of touched) {
    if (!shown.has(name)) continue;
    const from = lstatSync(join(merged, rel, name));
    const to = lstatSync(join(host, rel, name), { throwIfNoEntry: false });
    if (from.isDirectory() && to?.isDirectory() === true) {
      await sync(merged, host, layers, join(rel, name));
      copyAttributes(from, join(host, rel, name));
    } else {
      if (to !== undefined) rm(join(host, rel, name));
      copies.push(join(merged, rel, name));
    }
  }
  for (let i = 0; i < copies.length; i += BATCH) {
    const batch = copies.slice(i, i + BATCH);
    await cp(batch, join(host, rel));
    await dropSetIds(batch.map((from) => join(host, rel, basename(from))));
  }
}

/**
 * A file the sandbox made set-user-ID or set-group-ID would reach the host as root's: the bits are cleared
 * from every regular file the write-back copied (find -P follows no link).
 */
function dropSetIds(paths: string[]): Promise<void> {
  return runTool("find", ["-P", ...paths, "-type", "f", "-perm", "/6000", "-exec", "chmod", "ug-s", "--", "{}", "+"]);
}

/**
 * After a failed write-back (the host's disk is full, a file there is not
 * writable): the workspace as the session left it, copied whole to
 * `<root>.shellwright-unsaved-<tag>`, and a warning on this process's stderr
 * naming it, since close() itself reports no error. The error to throw.
 */
export async function rescue(overlay: { merged: string; root: string }, error: unknown): Promise<CheckpointError> {
  const reason = error instanceof Error ? error.message : String(error);
  const kept = `${overlay.root}.shellwright-unsaved-${randomBytes(6).toString("hex")}`;
  let message: string;
  try {
    mkdirSync(kept, { mode: 0o700 });
    await cp(
      readdirSync(overlay.merged).map((name) => join(overlay.merged, name)),
      kept,
    );
    message = `The session's changes to ${overlay.root} could not all be written back (${reason}); the workspace as the session left it is in ${kept}`;
  } catch (again) {
    const why = again instanceof Error ? again.message : String(again);
    message = `The session's changes to ${overlay.root} could not all be written back (${reason}), nor copied to ${kept} (${why}); they are lost`;
  }
  process.emitWarning(message, { code: "SHELLWRIGHT_WORKSPACE_UNSAVED" });
  return new CheckpointError("failed", message, { cause: error, backend: "local" });
}

function rm(path: string): void {
  rmSync(path, { recursive: true, force: true });
}

function copyAttributes(from: Stats, to: string): void {
  chownSync(to, from.uid, from.gid);
  chmodSync(to, from.mode & 0o7777);
  utimesSync(to, from.atime, from.mtime);
}

function cp(sources: string[], into: string): Promise<void> {
  return runTool("cp", ["-a", "-t", into, "--", ...sources]);
}

/** Runs a tool of the write-back; rejects with its exit code and the end of its stderr. */
function runTool(program: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => (err = (err + text).slice(-2000)));
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0
        ? resolve()
        : reject(
            new CheckpointError("failed", `Cannot write the workspace back: ${program} exited ${code}: ${err.trim()}`, {
              backend: "local",
            }),
          ),
    );
  });
}
