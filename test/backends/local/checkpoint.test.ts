/** Checkpoints, rollback and fork on the local backend with a declared workspace (docs/branching.md). */

import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CheckpointError, createEnvironment, InvalidOptionError, type Environment } from "../../../src/index.js";
import { alive, eventually } from "../../helpers/processes.js";
import { LocalCheckpoints } from "../../../src/backends/local/checkpoint.js";
import { runOk as run } from "../../helpers/session.js";
import { tree } from "../../helpers/tree.js";

let base: string;
let ws: string;
const opened: Environment[] = [];

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "sw-cp-test-"));
  ws = join(base, "ws");
  mkdirSync(join(ws, "sub"), { recursive: true });
  writeFileSync(join(ws, "a.txt"), "alpha\n", { mode: 0o640 });
  writeFileSync(join(ws, "sub", "b.txt"), "beta\n");
  writeFileSync(join(ws, "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
});

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((env) => env.close()));
  rmSync(base, { recursive: true, force: true });
});

async function open(config: Record<string, unknown> = {}): Promise<Environment> {
  const env = await createEnvironment({ workspace: ws, cwd: ws, ...config });
  opened.push(env);
  return env;
}

const checkpointDirs = (env: Environment) => join(dirname(env.paths.snapshot), "checkpoints");

describe("local checkpoints with a workspace", () => {
  it("rollback makes the workspace what it was: contents, modes, symlinks, deletions, renames; later files gone", async () => {
    const env = await open();
    await run(env, "ln -s a.txt link && chmod 0750 sub");
    const before = tree(ws);
    const cp = await env.checkpoint();
    expect(cp.holds).toEqual({ shell: true, workspace: { root: ws, bytes: expect.any(Number) } });
    await run(
      env,
      [
        "echo changed > a.txt && chmod 0600 a.txt",
        "rm sub/b.txt && chmod 0700 sub",
        "mv run.sh renamed.sh",
        "ln -sfn sub link",
        "echo new > new.txt && mkdir -p newdir/deep && echo x > newdir/deep/f",
        `echo outside > ${base}/outside.txt`,
      ].join(" && "),
    );
    expect(tree(ws)).not.toEqual(before);
    await env.rollback(cp);
    expect(tree(ws)).toEqual(before);
    // Outside the workspace: untouched.
    expect(readFileSync(join(base, "outside.txt"), "utf8")).toBe("outside\n");
    // Nothing of the swap is left beside the root (the old tree is removed after the swap).
    await eventually(() => readdirSync(base).length === 2, "the old workspace to be removed");
    expect(readdirSync(base).sort()).toEqual(["outside.txt", "ws"]);
    expect(await run(env, "cat a.txt; ls")).toBe("alpha\na.txt\nlink\nrun.sh\nsub");
  });

  it.each([true, false])("rollback restores the shell state (fastPath: %s)", async (fastPath) => {
    const env = await open({ fastPath });
    await run(env, "cd sub; export A=1; f() { echo f1; }; alias ll='echo a1'; shopt -s extglob; set -o noclobber");
    const cp = await env.checkpoint();
    await run(env, "cd /; export A=2 B=3; unset -f f; unalias ll; shopt -u extglob; set +o noclobber");
    await env.rollback(cp);
    expect(env.cwd).toBe(join(ws, "sub"));
    const probe =
      'pwd; echo "$A ${B-unset}"; f; ll; shopt -q extglob && echo extglob; [[ -o noclobber ]] && echo noclobber';
    expect(await run(env, probe)).toBe(`${join(ws, "sub")}\n1 unset\nf1\na1\nextglob\nnoclobber`);
  });

  it("ends background processes on rollback, however they detached, and the session goes on", async () => {
    const env = await open();
    const cp = await env.checkpoint();
    const pids = (await run(env, "sleep 300 & echo $!; setsid sleep 301 & echo $!")).split("\n").map(Number);
    expect(pids.every(alive)).toBe(true);
    await env.rollback(cp);
    await eventually(() => !pids.some(alive), "the background processes to end");
    expect(await run(env, "echo ok")).toBe("ok");
  });

  it("refuses a checkpoint while a command runs, and a command asked for during a rollback waits for it", async () => {
    const env = await open();
    const go = join(base, "go");
    const running = env.execute(`while [ ! -e ${go} ]; do sleep 0.05; done; echo done`);
    await eventually(async () => {
      const error = await env.checkpoint().catch((e: unknown) => e);
      if (!(error instanceof CheckpointError)) throw new Error(`expected a refusal, got ${String(error)}`);
      return error.reason === "busy" && /while a command of the session runs/.test(error.message);
    }, "the running command to be seen");
    writeFileSync(go, "");
    expect((await running).output).toContain("done");
    expect(env.checkpoints()).toEqual([]);

    const cp = await env.checkpoint();
    await run(env, "export A=after; echo after > a.txt");
    const rolling = env.rollback(cp);
    const next = env.execute('echo "${A-unset}"; cat a.txt');
    await rolling;
    expect((await next).output.trim()).toBe("unset\nalpha");
  });

  it("two rollbacks racing end in one of the two states, never a mix", async () => {
    const env = await open();
    await run(env, "export V=1; echo 1 > a.txt");
    const one = await env.checkpoint();
    await run(env, "export V=2; echo 2 > a.txt");
    const two = await env.checkpoint();
    await run(env, "export V=3; echo 3 > a.txt");
    await Promise.all([env.rollback(one), env.rollback(two)]);
    const [v, file] = (await run(env, 'echo "$V"; cat a.txt')).split("\n");
    expect(["1", "2"]).toContain(v);
    expect(file).toBe(v);
  });

  it("a checkpoint past workspaceMaxBytes fails, keeps nothing and leaves the session as it was", async () => {
    const env = await open({ workspaceMaxBytes: 65536 });
    await run(env, "export KEEP=yes; head -c 131072 /dev/zero > big");
    const before = tree(ws);
    const error = await env.checkpoint().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckpointError);
    expect((error as CheckpointError).reason).toBe("too_large");
    expect((error as Error).message).toMatch(/holds \d+ bytes, more than workspaceMaxBytes \(65536\)/);
    expect(env.checkpoints()).toEqual([]);
    expect(existsSync(checkpointDirs(env)) ? readdirSync(checkpointDirs(env)) : []).toEqual([]);
    expect(tree(ws)).toEqual(before);
    expect(await run(env, 'echo "$KEEP"; pwd')).toBe(`yes\n${ws}`);
    await run(env, "rm big");
    expect((await env.checkpoint()).holds.workspace?.root).toBe(ws);
  });

  it("an aborted checkpoint keeps nothing", async () => {
    const env = await open();
    const controller = new AbortController();
    controller.abort();
    const error = await env.checkpoint({ signal: controller.signal }).catch((e: unknown) => e);
    expect((error as CheckpointError).reason).toBe("aborted");
    expect(env.checkpoints()).toEqual([]);
  });

  it("forks are independent of the parent and of each other, and outlive the parent", async () => {
    const parent = await open();
    await run(parent, "cd sub; export WHO=parent");
    const children = await parent.fork({ count: 2 });
    opened.push(...children);
    const [c1, c2] = children as [Environment, Environment];
    const roots = children.map((child) => child.workspaceRoot!);
    expect(new Set([ws, ...roots]).size).toBe(3);
    for (const [i, child] of children.entries()) {
      expect(roots[i]!.startsWith(`${ws}.fork-`)).toBe(true);
      expect(child.cwd).toBe(join(roots[i]!, "sub"));
      // Its first command too runs in its copy: the parent's state names the parent's cwd.
      expect(await run(child, 'pwd; echo "$WHO"; cat b.txt')).toBe(`${join(roots[i]!, "sub")}\nparent\nbeta`);
    }
    await run(c1, "echo c1 > b.txt; export WHO=c1; cd ..");
    expect(await run(c2, 'echo "$WHO"; cat b.txt; pwd')).toBe(`parent\nbeta\n${join(roots[1]!, "sub")}`);
    expect(await run(parent, 'echo "$WHO"; cat b.txt; pwd')).toBe(`parent\nbeta\n${join(ws, "sub")}`);
    expect(readFileSync(join(ws, "sub", "b.txt"), "utf8")).toBe("beta\n");

    await parent.close();
    expect(await run(c1, 'echo "$WHO"; cat sub/b.txt')).toBe("c1\nc1");
    const states = children.map((child) => dirname(child.paths.snapshot));
    await Promise.all(children.map((child) => child.close()));
    for (const path of [...roots, ...states]) expect(existsSync(path)).toBe(false);
  });

  it("a fork moves only the state's own cwd line: a function's heredoc that looks like it is kept", async () => {
    const parent = await open();
    await run(parent, "cd sub && f() { cat <<'EOF'\n__sw_scwd=kept'\nEOF\n}");
    const [child] = await parent.fork({ count: 1 });
    opened.push(child!);
    expect(await run(child!, "pwd; f")).toBe(`${join(child!.workspaceRoot!, "sub")}\n__sw_scwd=kept'`);
  });

  it("closing removes every checkpoint's files, also from a stateDir that is kept", async () => {
    const env = await open({ stateDir: join(base, "state") });
    const cp = await env.checkpoint();
    await env.checkpoint();
    const dirs = checkpointDirs(env);
    expect(readdirSync(dirs).length).toBe(2);
    expect(lstatSync(dirs).mode & 0o077).toBe(0);
    await env.releaseCheckpoint(cp);
    expect(readdirSync(dirs)).toEqual([env.checkpoints()[0]!.id]);
    await expect(env.rollback(cp)).rejects.toMatchObject({ reason: "not_found" });
    await env.close();
    expect(existsSync(dirs)).toBe(false);
    expect(readdirSync(base).sort()).toEqual(["state", "ws"]);
  });

  it("names the bad option and its value", async () => {
    const file = join(ws, "a.txt");
    const bad: [Record<string, unknown>, string, RegExp][] = [
      [{ workspace: join(base, "missing") }, "workspace", /workspace ".*missing" does not exist/],
      [{ workspace: file }, "workspace", /is not a directory/],
      [{ workspace: "/" }, "workspace", /filesystem's root/],
      [{ workspace: ws, workspaceMaxBytes: 0 }, "workspaceMaxBytes", /positive integer, got 0/],
      [{ workspaceMaxBytes: 10 }, "workspaceMaxBytes", /workspaceMaxBytes 10 needs a workspace/],
      // In the sandbox the workspace is an overlay, which only root can mount (sandbox/overlay.test.ts as root).
      ...(process.getuid?.() === 0
        ? []
        : [
            [{ workspace: ws, sandbox: true }, "workspace", /inside the sandbox without root/] as [
              Record<string, unknown>,
              string,
              RegExp,
            ],
          ]),
      [{ workspace: ws, stateDir: join(ws, "state") }, "stateDir", /inside the workspace/],
    ];
    for (const [config, option, message] of bad) {
      const error = await createEnvironment(config).catch((e: unknown) => e);
      expect(error, JSON.stringify(config)).toBeInstanceOf(InvalidOptionError);
      expect((error as InvalidOptionError).option).toBe(option);
      expect((error as Error).message).toMatch(message);
    }
    const env = await open();
    for (const [call, option] of [
      [() => env.fork({ count: 0 }), "count"],
      [() => env.fork({ count: 1.5 }), "count"],
      [() => env.fork({ count: 101 }), "count"],
      [() => env.checkpoint({ signal: "x" } as never), "signal"],
      [() => env.checkpoint({ label: 1 } as never), "label"],
      [() => env.rollback({ id: "nope" } as never), "checkpoint"],
    ] as const)
      await expect(call()).rejects.toMatchObject({ code: "INVALID_OPTION", option });
    const other = await open();
    const foreign = await other.checkpoint();
    await expect(env.rollback(foreign)).rejects.toMatchObject({ reason: "not_found" });
  });

  it("a workspace given as a symlink is checkpointed and restored (its physical root)", async () => {
    const link = join(base, "link");
    symlinkSync(ws, link);
    const env = await open({ workspace: link, cwd: link });
    const before = tree(ws);
    const cp = await env.checkpoint();
    await run(env, "echo changed > a.txt && rm -r sub");
    await env.rollback(cp);
    expect(tree(ws)).toEqual(before);
    expect(cp.holds.workspace).toEqual({ root: ws, bytes: expect.any(Number) });
    expect(cp.holds.workspace!.bytes).toBeGreaterThan(100);
  });

  it("a fork of a root under a symlinked dir works in its own copy, never in the parent's", async () => {
    symlinkSync(base, join(base, "alias"));
    const logical = join(base, "alias", "ws");
    const parent = await open({ workspace: logical, cwd: logical });
    const [child] = await parent.fork({ count: 1 });
    opened.push(child!);
    const copy = child!.workspaceRoot!;
    await run(child!, "echo child > a.txt");
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("alpha\n");
    expect(await run(child!, "pwd -P")).toBe(copy);
    expect(readFileSync(join(copy, "a.txt"), "utf8")).toBe("child\n");
    expect(copy.startsWith(`${ws}.fork-`)).toBe(true);
  });

  it("a rollback after the workspace root was removed restores it and leaves nothing beside it", async () => {
    const env = await open();
    const before = tree(ws);
    const cp = await env.checkpoint();
    await run(env, `cd / && rm -rf ${ws}`);
    expect(existsSync(ws)).toBe(false);
    await env.rollback(cp);
    expect(tree(ws)).toEqual(before);
    expect(readdirSync(base)).toEqual(["ws"]);
    expect(await run(env, "pwd; cat a.txt")).toBe(`${ws}\nalpha`);
  });

  it("a rollback that fails after its copy was made fails with a CheckpointError and leaves no copy", async () => {
    const state = join(base, "state");
    mkdirSync(state, { mode: 0o700 });
    writeFileSync(join(state, "snapshot"), "export A=1\n");
    const support = new LocalCheckpoints(
      { root: ws, maxBytes: 1 << 20 },
      {
        stateDir: () => state,
        endProcesses: () => Promise.reject(new Error("injected: the processes could not be ended")),
        prepareFastPath: () => undefined,
        openChild: () => Promise.reject(new Error("unused")),
      },
    );
    const host = { id: "s", cwd: ws, paths: { snapshot: join(state, "snapshot") } } as never;
    await support.save(host, "cp-1", undefined);
    const error = await support.restore(host, "cp-1", undefined).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckpointError);
    expect((error as Error).message).toMatch(/roll back: injected/);
    expect(readdirSync(base).sort()).toEqual(["state", "ws"]);
    expect(readdirSync(state).sort()).toEqual(["checkpoint-dirs", "checkpoints", "snapshot"]);
    expect(readFileSync(join(state, "checkpoint-dirs"), "utf8")).toBe("");
    await support.close();
  });
});
