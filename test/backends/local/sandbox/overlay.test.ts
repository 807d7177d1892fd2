/**
 * The workspace of a sandboxed session as overlay layers (docs/branching.md):
 * checkpoints freeze a layer, a rollback mounts a checkpoint's layers again,
 * close writes the changes into the host directory and leaves no layer,
 * mount or dir behind; a command inside cannot unmount, cover or reach them.
 */

import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { basename, dirname, join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CheckpointError,
  createEnvironment,
  InvalidOptionError,
  UnsupportedError,
  type Environment,
} from "../../../../src/index.js";
import { alive, eventually } from "../../../helpers/processes.js";
import { runOk as run } from "../../../helpers/session.js";
import { tree } from "../../../helpers/tree.js";
import { executeOn, HAVE_BWRAP, makeWorld, PATHS, pidsWithMark, SKIP_REASON, skipUnlessPath } from "./fixture.js";

const ROOT = process.getuid?.() === 0;
const world = makeWorld();
let ws: string;
const opened: Environment[] = [];

beforeEach(() => {
  ws = join(world.work, `ws-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(join(ws, "sub", "deep"), { recursive: true });
  writeFileSync(join(ws, "a.txt"), "alpha\n", { mode: 0o640 });
  writeFileSync(join(ws, "sub", "b.txt"), "beta\n");
  writeFileSync(join(ws, "sub", "deep", "c.txt"), "gamma\n");
  writeFileSync(join(ws, "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
  // Not mkdir's default: the overlay's root shows its upper layer's mode, which must be the host dir's.
  chmodSync(ws, 0o750);
});

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((env) => env.close()));
});

afterAll(() => world.cleanup());

async function open(config: Record<string, unknown> = {}): Promise<Environment> {
  const env = await createEnvironment({
    workspace: ws,
    cwd: ws,
    sandbox: { writable: [world.work], denyRead: [world.secretDir] },
    ...config,
  });
  opened.push(env);
  return env;
}

/** The sandbox's init (bwrap's child), found by the session's state dir on bwrap's command line. */
function initPid(env: Environment): number {
  const state = dirname(env.paths.snapshot);
  const bwrap = pidsWithMark(state).find((pid) => readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "bwrap");
  if (bwrap === undefined) throw new Error(`no bwrap runs for ${state}`);
  const child = readFileSync(`/proc/${bwrap}/task/${bwrap}/children`, "utf8").trim().split(" ")[0];
  return Number(child);
}

/** The workspace as the sandbox sees it (its overlay), read through its init's root. */
const inside = (env: Environment): Record<string, string> => tree(`/proc/${initPid(env)}/root${ws}`);

const CHANGES = [
  "echo changed > a.txt && chmod 0600 a.txt",
  "rm sub/b.txt && chmod 0700 sub",
  "mv run.sh renamed.sh",
  "mv sub/deep moved",
  "ln -s a.txt link",
  "echo new > new.txt && mkdir -p newdir/x && echo x > newdir/x/f",
].join(" && ");

describe.skipIf(!HAVE_BWRAP || !ROOT)(
  `a sandboxed workspace as overlay layers (${HAVE_BWRAP ? "needs root" : SKIP_REASON})`,
  () => {
    it.for(PATHS)(
      "rollback makes the workspace what it was; the host dir stays as it was until close ($name)",
      async ({ fastPath }, context) => {
        skipUnlessPath(context, fastPath);
        const host = tree(ws);
        const env = await open({ fastPath });
        await executeOn(env, fastPath, "ln -s sub/b.txt blink && chmod 0750 sub/deep");
        const before = inside(env);
        expect(before["."]).toBe("dir 750");
        const cp = await env.checkpoint();
        expect(cp.holds.workspace?.root).toBe(ws);
        const outside = `${ws}.outside.txt`;
        await executeOn(env, fastPath, `${CHANGES} && echo out > ${outside}`);
        // A directory removed and made again: the overlay hides what the host has below it.
        await executeOn(env, fastPath, "rm -rf newdir && mkdir newdir && echo again > newdir/g");
        expect(inside(env)).not.toEqual(before);
        await env.rollback(cp);
        expect(inside(env)).toEqual(before);
        expect(await run(env, "pwd; cat a.txt; ls")).toBe(`${ws}\nalpha\na.txt\nblink\nrun.sh\nsub`);
        expect(tree(ws)).toEqual(host);
        // Outside the workspace (a writable root of its own): written at once, and left alone by the rollback.
        expect(readFileSync(outside, "utf8")).toBe("out\n");
      },
    );

    it("close writes every change into the host dir, then no layer, mount, process or dir is left", async () => {
      // A directory removed and made again holds nothing but an opaque, empty copy in the top layer.
      mkdirSync(join(ws, "build"));
      writeFileSync(join(ws, "build", "old.o"), "stale\n");
      const env = await open();
      const cp = await env.checkpoint();
      await run(env, CHANGES);
      await env.rollback(cp);
      await run(env, `${CHANGES} && rm -rf newdir && mkdir newdir && echo again > newdir/g && chmod 0701 .`);
      await env.checkpoint();
      await run(env, "echo last > last.txt && rm new.txt && rm -rf build && mkdir build");
      const final = inside(env);
      const init = initPid(env);
      const state = dirname(env.paths.snapshot);
      // 2 was the upper the rollback threw away; 1 and 3 are frozen, 4 is the upper with its work dir.
      expect(readdirSync(join(state, "layers")).sort()).toEqual([
        "1",
        "3",
        "4",
        "lower",
        "root",
        "stack",
        "view",
        "w4",
      ]);
      // The stack on disk, upper first, for a keep after the owner's death (overlay-owner-death.test.ts).
      expect(readFileSync(join(state, "layers", "stack"), "utf8")).toBe("4 3 1\n");
      await env.close();
      expect(tree(ws)).toEqual(final);
      expect(existsSync(state)).toBe(false);
      await eventually(() => !alive(init), "the sandbox's init to be gone (and its mount namespace with it)");
      expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(ws);
    });

    it("clears set-user-ID and set-group-ID from the files close writes into the host dir", async () => {
      const env = await open();
      await run(env, "echo x > tool && chmod 6755 tool && mkdir -p bin && cp tool bin/tool2 && chmod 4711 bin/tool2");
      expect(await run(env, "stat -c %a tool bin/tool2")).toBe("6755\n4711");
      await env.close();
      expect(tree(ws)).toMatchObject({ tool: "file 755 x\n", "bin/tool2": "file 711 x\n" });
    });

    it("a write-back that fails at close keeps the workspace as the session left it beside the root, and warns", async () => {
      const env = await open();
      await run(env, "echo mine > a.txt && echo new > new.txt");
      const final = inside(env);
      // The host's a.txt cannot be replaced, even by root: the write-back fails halfway.
      execFileSync("chattr", ["+i", join(ws, "a.txt")]);
      const warnings: Error[] = [];
      const onWarning = (warning: Error): number => warnings.push(warning);
      process.on("warning", onWarning);
      try {
        await env.close();
      } finally {
        process.off("warning", onWarning);
        execFileSync("chattr", ["-i", join(ws, "a.txt")]);
      }
      const kept = readdirSync(world.work).filter((name) => name.startsWith(`${basename(ws)}.shellwright-unsaved-`));
      expect(kept).toHaveLength(1);
      const copy = join(world.work, kept[0]!);
      expect({ ...tree(copy), ".": final["."] }).toEqual(final);
      expect(warnings.map((w) => w.message).join("\n")).toContain(copy);
      rmSync(copy, { recursive: true });
    });

    it("checkpoints stack: roll back, roll forward again, release; a layer goes once nothing stands on it", async () => {
      const env = await open({ fastPath: false });
      const layers = join(dirname(env.paths.snapshot), "layers");
      const one = await env.checkpoint();
      await run(env, "echo 2 > a.txt");
      const two = await env.checkpoint();
      await run(env, "echo 3 > a.txt");
      await env.rollback(one);
      expect(await run(env, "cat a.txt")).toBe("alpha");
      await env.rollback(two);
      expect(await run(env, "cat a.txt")).toBe("2");
      await env.releaseCheckpoint(two);
      // two's upper (2) is the stack's own lower now; one's (1) too; the uppers rolled back from are gone.
      expect(readdirSync(layers).filter((name) => /^\d+$/.test(name))).toEqual(["1", "2", "5"]);
      await env.rollback(one);
      await env.releaseCheckpoint(one);
      expect(readdirSync(layers).filter((name) => /^\d+$/.test(name))).toEqual(["1", "6"]);
      expect(await run(env, "cat a.txt")).toBe("alpha");
    });

    it("refuses a checkpoint while a background process holds the workspace, and while a command runs", async () => {
      const env = await open();
      const pid = Number(await run(env, "sleep 300 >/dev/null 2>&1 & echo $!"));
      const error = await env.checkpoint().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointError);
      expect((error as CheckpointError).reason).toBe("busy");
      expect(await run(env, "cat a.txt")).toBe("alpha");
      await run(env, `kill ${pid}`);
      await eventually(
        async () =>
          (await env.checkpoint().then(
            () => true,
            () => false,
          )) === true,
        "a checkpoint",
      );
      const go = join(world.root, `go-${Math.random().toString(36).slice(2)}`);
      const running = env.execute(`while [ ! -e ${go} ]; do sleep 0.05; done`);
      await eventually(async () => {
        const refused = await env.checkpoint().catch((e: unknown) => e);
        return refused instanceof CheckpointError && /while a command of the session runs/.test(refused.message);
      }, "the running command to be seen");
      writeFileSync(go, "");
      await running;
    });

    it("a command cannot unmount, cover, move or reach the layers, and nothing reaches the host before close", async () => {
      const env = await open();
      const layers = join(dirname(env.paths.snapshot), "layers");
      const cp = await env.checkpoint();
      const attempts = [
        `umount ${ws}`,
        `umount -l ${ws}`,
        `mount -t tmpfs none ${ws}`,
        `mount --bind /tmp ${ws}`,
        `mv ${ws} ${ws}.moved`,
        `ls ${layers}`,
        `touch ${layers}/1/planted`,
        `mv ${layers} ${layers}.x`,
        `echo x > ${layers}/lower/a.txt`,
        `nsenter --target=1 --mount -- true`,
      ];
      for (const attempt of attempts) {
        const result = await env.execute(`${attempt} 2>&1`);
        expect(result.exitCode, `${attempt}: ${result.output}`).not.toBe(0);
      }
      // The host dir below the overlay is bound read-only, also where the overlay takes it from.
      const lower = execFileSync("nsenter", [
        "--target",
        String(initPid(env)),
        "--mount",
        "--pid",
        "--",
        "findmnt",
        "-no",
        "OPTIONS",
        `${layers}/lower`,
      ]);
      expect(lower.toString()).toMatch(/^ro,/);
      await run(env, "echo mine > a.txt");
      expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("alpha\n");
      await env.rollback(cp);
      // Overlays mounted on the workspace (the host's own, such as Docker's, show in the sandbox too).
      const onWorkspace = `awk -v ws=${ws} '$5 == ws && $(NF - 2) == "overlay"' /proc/self/mountinfo | wc -l`;
      expect(await run(env, `cat a.txt; ${onWorkspace}`)).toBe("alpha\n1");
      expect(existsSync(`${ws}.moved`)).toBe(false);
    });

    it("refuses a fork with a clear error", async () => {
      const env = await open();
      const error = await env.fork({ count: 1 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnsupportedError);
      expect((error as Error).message).toMatch(/fork of a sandboxed session with a workspace/);
      expect(readdirSync(world.work).filter((name) => name.startsWith(`${basename(ws)}.`))).toEqual([]);
    });

    it("refuses at open a writable root, a denied path inside the workspace, and a session that outlives this process", async () => {
      const writable = open({ sandbox: { writable: [join(ws, "sub")] } });
      await expect(writable).rejects.toThrow(InvalidOptionError);
      await expect(writable).rejects.toThrow(/holds the writable root/);
      const denied = open({ sandbox: { writable: [ws], denyRead: [join(ws, "sub")] } });
      await expect(denied).rejects.toThrow(/which the sandbox hides/);
      // A named session outlives this process, and its sandbox does not: its changes would never be written back.
      await expect(open({ outliveOwner: true })).rejects.toThrow(/outlives this process/);
      rmSync(join(ws, "sub"), { recursive: true });
    });
  },
);
