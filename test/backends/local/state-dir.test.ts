/**
 * Where a local session keeps its state dir (src/backends/local/state-dir.ts):
 * where programs can run, since the PTY helper runs from it, and /dev/shm is
 * noexec in Docker, Podman and Kubernetes. The container case is made here
 * with a private mount namespace whose /dev/shm is remounted noexec.
 */

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { noStaticHelper } from "../../helpers/native-helper.js";

const fixture = join(import.meta.dirname, "../../fixtures/noexec-state-dir.mjs");

/** Why a private mount namespace cannot be made here (it needs root and unshare), or undefined. */
const noMountNamespace = ((): string | undefined => {
  if (process.getuid?.() !== 0) return "needs root for a private mount namespace";
  const probe = spawnSync("unshare", ["-m", "--propagation", "private", "true"], { stdio: "ignore" });
  return probe.status === 0 ? undefined : "unshare -m does not work here";
})();

/** Runs `args` in a private mount namespace where /dev/shm (and `noexecDir`, if given) is mounted noexec. */
function inNoexecNamespace(args: string[], env: NodeJS.ProcessEnv, noexecDir?: string) {
  const mounts = [
    "mount -o remount,noexec /dev/shm",
    ...(noexecDir === undefined ? [] : [`mount -t tmpfs -o noexec tmpfs '${noexecDir}'`]),
  ];
  return spawnSync(
    "unshare",
    ["-m", "--propagation", "private", "sh", "-c", `${mounts.join(" && ")} && exec "$@"`, "sh", ...args],
    { env, encoding: "utf8", timeout: 90_000 },
  );
}

describe("the local state dir", () => {
  it.skipIf(noMountNamespace !== undefined || noStaticHelper !== undefined)(
    "with /dev/shm mounted noexec, goes where programs run: docs/interactive.md's REPL and exec_command work",
    () => {
      const env = { ...process.env };
      delete env.XDG_RUNTIME_DIR;
      const run = inNoexecNamespace([process.execPath, fixture], env);
      expect(run.status, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(report.error).toBeUndefined();
      expect(report.stateDir).not.toMatch(/^\/dev\/shm\//);
      expect(report.prompt).toMatchObject({ status: "matched" });
      expect(report.repl).toMatchObject({ status: "matched", output: "6*7\n42\n>>> " });
      expect(report.screen).toMatch(/^>>> 6\*7\n42\n>>> $/m);
      expect(report.execCommand).toMatchObject({ output: "on a terminal\n", exit_code: 0 });
    },
  );

  it.skipIf(noMountNamespace !== undefined || noStaticHelper !== undefined)(
    "a given stateDir that is noexec: the PTY error names stateDir and what to do",
    () => {
      // Without the fast path, whose helper runs in place: the helper is then copied into the state dir.
      const root = mkdtempSync(join(tmpdir(), "sw-noexec-"));
      try {
        const given = join(root, "mnt");
        mkdirSync(given);
        const script = `
          import { createEnvironment, processRegistry } from ${JSON.stringify(join(import.meta.dirname, "../../../dist/index.js"))};
          const session = await createEnvironment({ backend: "local", fastPath: false, stateDir: ${JSON.stringify(join(given, "state"))} });
          try { await processRegistry(session).spawn("cat", { pty: { cols: 80, rows: 24 } }); console.log("no error"); }
          catch (error) { console.log(error.message); }
          finally { await session.close(); }`;
        const run = inNoexecNamespace([process.execPath, "--input-type=module", "-e", script], process.env, given);
        expect(run.status, run.stderr).toBe(0);
        expect(run.stdout).toMatch(/cannot run from the session's state directory .*mounted noexec/);
        expect(run.stdout).toMatch(/set the `stateDir` option/);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  );
});
