/**
 * A sandboxed workspace's changes when its owner dies before close()
 * (docs/branching.md): a real node owner (test/fixtures/overlay-owner.mjs, on
 * the built dist/) changes files, takes a checkpoint, changes more and is
 * SIGKILLed. Its owner watchdog, or `shellwright sessions --prune` when the
 * watchdog was killed too, copies the workspace as the session left it to
 * `<root>.shellwright-unsaved-<tag>` before the state dir goes; the root
 * itself is unchanged, and no mount or process of the session is left. A
 * layers dir a sandboxed command planted in its state dir is not trusted.
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, cliHome } from "../../../helpers/cli.js";
import { startOwnerFixture } from "../../../helpers/owner-fixture.js";
import { killAll, pidsWithCmdline } from "../../../helpers/proc-scan.js";
import { alive, eventually } from "../../../helpers/processes.js";
import { tree } from "../../../helpers/tree.js";
import { HAVE_BWRAP, makeWorld, SKIP_REASON } from "./fixture.js";

const ROOT = process.getuid?.() === 0;
const fixture = join(import.meta.dirname, "../../../fixtures/overlay-owner.mjs");
const world = makeWorld();
const where = cliHome();
const started = new Set<number>();
afterAll(() => {
  killAll(started);
  where.remove();
  world.cleanup();
});

interface Report {
  owner: number;
  stateDir: string;
}

/** A fresh workspace: what the fixture's owner changes (before.txt, gone.txt, kept.txt, sub/old.txt...). */
function workspace(name: string): string {
  const ws = join(world.work, name);
  mkdirSync(join(ws, "sub"), { recursive: true });
  writeFileSync(join(ws, "gone.txt"), "gone\n");
  writeFileSync(join(ws, "kept.txt"), "original\n");
  writeFileSync(join(ws, "untouched.txt"), "same\n");
  writeFileSync(join(ws, "sub", "old.txt"), "old\n");
  return ws;
}

/** The workspace as the session left it: the host's files under both layers' changes. */
function expected(ws: string): Record<string, string> {
  const view = `${ws}-expected`;
  rmSync(view, { recursive: true, force: true });
  mkdirSync(join(view, "sub", "new"), { recursive: true });
  writeFileSync(join(view, "before.txt"), "before\n");
  writeFileSync(join(view, "after.txt"), "after\n");
  writeFileSync(join(view, "kept.txt"), "changed\n");
  writeFileSync(join(view, "untouched.txt"), "same\n");
  writeFileSync(join(view, "sub", "new", "n.txt"), "n\n");
  const want = withoutTop(tree(view));
  rmSync(view, { recursive: true, force: true });
  return want;
}

/** A tree without its top dir's own mode (a kept copy's dir is made 0700). */
function withoutTop(t: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(t).filter(([key]) => key !== "."));
}

const keptCopies = (ws: string) =>
  readdirSync(dirname(ws))
    .filter((name) => name.startsWith(`${basename(ws)}.shellwright-unsaved-`))
    .map((name) => join(dirname(ws), name));

const mountsUnder = (...paths: string[]) =>
  readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((line) => paths.some((path) => line.includes(path)));

async function startOwner(
  ws: string,
  mode = "",
): Promise<{ report: Report; watchdog: number; kill: () => Promise<void> }> {
  const { child, report } = await startOwnerFixture<Report>(fixture, [ws, mode], started, where.env);
  const watchdogs = pidsWithCmdline("shellwright-watchdog", report.stateDir);
  expect(watchdogs).toHaveLength(1);
  started.add(watchdogs[0]!);
  const kill = async () => {
    const ended = new Promise((resolve) => child.once("exit", resolve));
    process.kill(child.pid!, "SIGKILL");
    await ended;
  };
  return { report, watchdog: watchdogs[0]!, kill };
}

/** The changes are in exactly one kept copy, the root is as before, nothing of the session is left. */
function checkKept(ws: string, before: Record<string, string>, report: Report): void {
  const kept = keptCopies(ws);
  expect(kept).toHaveLength(1);
  expect(withoutTop(tree(kept[0]!))).toEqual(expected(ws));
  expect(tree(ws)).toEqual(before);
  expect(existsSync(report.stateDir)).toBe(false);
  expect(mountsUnder(report.stateDir, ws)).toEqual([]);
  expect(pidsWithCmdline(report.stateDir)).toEqual([]);
  expect(alive(report.owner)).toBe(false);
}

/** Kills the watchdog, then the owner; `between` checks the dir before --prune; --prune's result. */
async function pruneAfterBothDie(
  report: Report,
  watchdog: number,
  kill: () => Promise<void>,
  between: () => void,
): Promise<{ stderr: string }> {
  process.kill(watchdog, "SIGKILL");
  await eventually(() => !alive(watchdog), "the watchdog dies");
  await kill();
  // The sandbox dies with its owner (bwrap --die-with-parent); the layers stay in the state dir until --prune.
  await eventually(() => pidsWithCmdline(report.stateDir).length === 0, "the sandbox ends with its owner");
  expect(existsSync(report.stateDir)).toBe(true);
  between();
  const result = cli(where, ["sessions", "--json", "--prune"]);
  expect(result.code, result.stderr).toBe(0);
  const pruned = (JSON.parse(result.stdout) as { pruned: { what: string }[] }).pruned.map((p) => p.what);
  expect(pruned).toContain(report.stateDir);
  return result;
}

describe.skipIf(!HAVE_BWRAP || !ROOT)(
  `a dead owner's sandboxed workspace changes are kept (${HAVE_BWRAP ? "needs root" : SKIP_REASON})`,
  () => {
    it("by the owner watchdog, beside the root", async () => {
      const ws = workspace("by-watchdog");
      const before = tree(ws);
      const { report, watchdog, kill } = await startOwner(ws);
      await kill();
      await eventually(() => !alive(watchdog) && !existsSync(report.stateDir), "the watchdog cleans up");
      checkKept(ws, before, report);
    }, 120_000);

    it("by sessions --prune when the watchdog died too, after a rollback", async () => {
      const ws = workspace("by-prune");
      const before = tree(ws);
      const { report, watchdog, kill } = await startOwner(ws, "rollback");
      const result = await pruneAfterBothDie(report, watchdog, kill, () => expect(keptCopies(ws)).toEqual([]));
      expect(result.stderr).toContain(keptCopies(ws)[0]);
      checkKept(ws, before, report);
    }, 120_000);

    it("--prune neither trusts nor runs a layers dir a sandboxed command planted in its state dir", async () => {
      const target = workspace("planted-target");
      const before = tree(target);
      const { report, watchdog, kill } = await startOwner(target, "plant");
      // The sandbox maps no uid but the session's: the planted dir cannot be given the layers dir's owner.
      const planted = statSync(join(report.stateDir, "layers"));
      expect(planted.uid).not.toBe(65534);
      await pruneAfterBothDie(report, watchdog, kill, () => undefined);
      expect(keptCopies(target)).toEqual([]);
      expect(tree(target)).toEqual(before);
      expect(existsSync(report.stateDir)).toBe(false);
    }, 120_000);
  },
);
