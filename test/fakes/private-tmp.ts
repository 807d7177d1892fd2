/**
 * FAKE sandbox filesystem, for the fake SDK sandboxes that snapshot and
 * fork (fake-modal.ts, fake-daytona.ts): NOT a cloud sandbox's disk. A real
 * sandbox has a filesystem of its own; the fakes run their programs on this
 * machine, so here a sandbox's own files are its /tmp only: a private
 * directory bound over /tmp with bubblewrap in each of its programs (they
 * see the rest of this machine, shared). A snapshot or a fork copies that
 * directory; a sandbox started from it gets a copy of the copy.
 */

import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let root: string | undefined;
let made = 0;

export class PrivateTmp {
  private constructor(readonly dir: string) {}

  /** Why a private /tmp cannot be made here (no bubblewrap, or it cannot bind), or undefined when it can. */
  static unavailable(): string | undefined {
    const probe = spawnSync("bwrap", ["--dev-bind", "/", "/", "--tmpfs", "/tmp", "--", "true"], { encoding: "utf8" });
    return probe.status === 0
      ? undefined
      : `bwrap cannot bind a private /tmp here: ${probe.error?.message ?? probe.stderr.trim()}`;
  }

  /** An empty /tmp (a sandbox from a registry image). */
  static fresh(): PrivateTmp {
    root ??= mkdtempSync(join(tmpdir(), "fake-sandbox-tmp-"));
    const dir = join(root, String(++made));
    mkdirSync(dir, { mode: 0o1777 });
    return new PrivateTmp(dir);
  }

  /** A copy of this one as it is now (a snapshot, a fork, a sandbox started from a snapshot). */
  copy(): PrivateTmp {
    const copy = PrivateTmp.fresh();
    execFileSync("cp", ["-a", "--reflink=auto", "--", `${this.dir}/.`, copy.dir]);
    return copy;
  }

  /** `argv` run with this directory as its /tmp. */
  argv(argv: readonly string[]): string[] {
    return ["bwrap", "--dev-bind", "/", "/", "--bind", this.dir, "/tmp", "--", ...argv];
  }

  /** Where a path as the sandbox's programs see it lies on this machine. */
  hostPath(path: string): string {
    return path === "/tmp" || path.startsWith("/tmp/") ? this.dir + path.slice("/tmp".length) : path;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
