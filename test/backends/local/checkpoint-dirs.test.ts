/**
 * The dirs a rollback or fork makes beside the workspace root are recorded in
 * the state dir while they exist (src/backends/local/checkpoint-dirs.ts), and
 * `--prune` removes what a dead session's record names, nothing else.
 */

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LocalCheckpoints } from "../../../src/backends/local/checkpoint.js";
import { CHECKPOINT_DIRS_FILE } from "../../../src/backends/local/checkpoint-dirs.js";
import { localLeftovers } from "../../../src/backends/local/leftovers.js";
import { SANDBOX_DIR_PREFIX } from "../../../src/backends/local/paths.js";
import { CheckpointError } from "../../../src/index.js";

let base: string;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "sw-cp-dirs-"));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const dirs = <T extends string[]>(...names: T): { [K in keyof T]: string } =>
  names.map((name) => {
    mkdirSync(join(base, name));
    return join(base, name);
  }) as { [K in keyof T]: string };

describe("checkpoint dirs beside the workspace", () => {
  it("a fork's copy is recorded while it exists, and forgotten when a failed fork removes it", async () => {
    const ws = join(base, "ws");
    const state = join(base, "state");
    mkdirSync(ws);
    writeFileSync(join(ws, "f"), "x");
    mkdirSync(state, { mode: 0o700 });
    writeFileSync(join(state, "snapshot"), "");
    const record = join(state, CHECKPOINT_DIRS_FILE);
    let seen = "";
    const support = new LocalCheckpoints(
      { root: ws, maxBytes: 1 << 20 },
      {
        stateDir: () => state,
        endProcesses: () => Promise.resolve(),
        prepareFastPath: () => undefined,
        openChild: () => {
          seen = readFileSync(record, "utf8");
          return Promise.reject(new Error("injected: the child could not be opened"));
        },
      },
    );
    const host = { id: "s", cwd: ws, paths: { snapshot: join(state, "snapshot") } } as never;
    const error = await support.fork(host, undefined).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckpointError);
    expect(seen).toMatch(new RegExp(`^${ws}\\.fork-[0-9a-f]{12}\\n$`));
    expect(existsSync(seen.trim())).toBe(false);
    expect(readFileSync(record, "utf8")).toBe("");
  });

  it("--prune removes the recorded dirs of a dead session, never a forged line or a sandboxed session's record", async () => {
    const [fork, restore, old, kept] = dirs(
      "ws.fork-0123456789ab",
      ".ws.shellwright-restore-0123456789ab",
      ".ws.shellwright-old-0123456789ab",
      "precious",
    );
    const state = join(base, "shellwright-dead");
    const sandboxed = join(base, `${SANDBOX_DIR_PREFIX}dead`);
    const fromSandbox = dirs("other.fork-ba9876543210")[0]!;
    mkdirSync(state);
    mkdirSync(sandboxed);
    writeFileSync(
      join(state, CHECKPOINT_DIRS_FILE),
      [fork, restore, old, kept, "relative.fork-0123456789ab", ""].join("\n"),
    );
    writeFileSync(join(sandboxed, CHECKPOINT_DIRS_FILE), `${fromSandbox}\n`);
    const owner = `${hostname()}/999999999`;
    await localLeftovers.remove([
      { kind: "state-dir", what: state, owner },
      { kind: "state-dir", what: sandboxed, owner },
    ]);
    for (const path of [fork, restore, old, state, sandboxed]) expect(existsSync(path), path).toBe(false);
    for (const path of [kept, fromSandbox]) expect(existsSync(path), path).toBe(true);
  });
});
