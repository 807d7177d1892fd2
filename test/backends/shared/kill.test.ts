/**
 * The orphan matrix: every way a process can leave its call (ignore TERM, a
 * new session, a new group, a double fork, a dead parent, a PID hopper, a new
 * PID namespace, an emptied environment) × timeout, interrupt and close(), on
 * every backend of the compat suite. Each shape writes `pid starttime` of its
 * long-lived processes to a file; afterwards a fresh call looks each one up
 * in /proc, where the processes run, and must find none (a zombie counts as
 * gone; the start time rules out a reused PID).
 */

import { mkdirSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../../../src/index.js";
import { shellQuote } from "../../../src/core/script.js";
import { compatBackends } from "../../compat/backends.js";

/** `pid starttime` of PID $1 appended to file $2 (bash builtins only). */
const REC = 'rec() { local s f=$2; read -r s < /proc/$1/stat; s=${s##*) }; set -- "$1" $s; echo "$1 ${21}" >> "$f"; }';

/** A bash line that records its own PID into `file`, for a shape's process that then execs what it will be. */
const self = (file: string): string =>
  `read -r s < /proc/$$/stat; s=\${s##*) }; set -- $s; echo "$$ \${20}" >> ${shellQuote(file)}`;

/** The shapes, each a line started in the background of the call (so they all start at once). */
function shapes(dir: string): Record<string, string> {
  const f = (name: string): string => `${dir}/${name}.pids`;
  const sleeper = (name: string, n: number): string => shellQuote(`${self(f(name))}; exec sleep ${n}`);
  const hopper = `${dir}/hop.sh`;
  return {
    // A child that ignores TERM (SIG_IGN is inherited through exec).
    trapTerm: `bash -c ${shellQuote(`trap '' TERM; ${self(f("trapTerm"))}; sleep 4242 & echo "$! $(read -r s < /proc/$!/stat; s=\${s##*) }; set -- $s; echo \${20})" >> ${f("trapTerm")}; wait`)}`,
    setsidForeground: `setsid bash -c ${sleeper("setsidForeground", 4300)}`,
    setsidFork: `setsid -f bash -c ${sleeper("setsidFork", 4301)}`,
    doubleForkSetsid: `( ( setsid bash -c ${sleeper("doubleForkSetsid", 4302)} & ) & )`,
    nohup: `nohup bash -c ${sleeper("nohup", 4305)} >/dev/null 2>&1`,
    subshellSetsid: `( setsid bash -c ${sleeper("subshellSetsid", 4306)} & )`,
    disowned: `{ bash -c ${sleeper("disowned", 4307)} & disown; }`,
    // env -i without setsid: no mark, but still in the call's group and session.
    emptyEnv: `env -i bash -c ${sleeper("emptyEnv", 4311)}`,
    // A forker that hops to a new PID (and a new session) every 20-50 ms. It
    // gives up after a minute on its own, so a failed run cannot leave it
    // forking (each hop leaves a zombie for init to reap) for ever.
    hopper: `printf '%s\\n' ${shellQuote(`${self(f("hopper"))}; sleep 0.0$((RANDOM % 4 + 2)); ((EPOCHSECONDS < $1)) && exec setsid -f bash "$0" "$1"`)} > ${hopper}; setsid -f bash ${hopper} $((EPOCHSECONDS + 60))`,
    // setpgid in a child that then execs (perl is in the test image and on the host; skipped where it is not).
    perlSetpgrp: `if command -v perl >/dev/null; then perl -e ${shellQuote(`setpgrp(0,0); exec "bash", "-c", q{${self(f("perlSetpgrp"))}; exec sleep 4343}`)}; else echo skip > ${f("perlSetpgrp")}; fi`,
    // A new PID namespace (needs root and a kernel that allows it; skipped elsewhere).
    pidNamespace: `if unshare -p -f true 2>/dev/null; then unshare -p -f sleep 4310 & u=$!; until [[ -n $(< /proc/$u/task/$u/children) ]]; do sleep 0.02; done; rec $u ${f("pidNamespace")}; for c in $(< /proc/$u/task/$u/children); do rec $c ${f("pidNamespace")}; done; else echo skip > ${f("pidNamespace")}; fi`,
  };
}

/** The call: start every shape, say "ready" once each has recorded a PID, then (foreground) wait. */
export function launch(dir: string, foreground: boolean): string {
  const all = shapes(dir);
  const names = Object.keys(all);
  return [
    `mkdir -p ${dir}`,
    REC,
    ...names.map((name) => `( ${all[name]} ) &`),
    `for n in ${names.join(" ")}; do until [[ -s ${dir}/$n.pids ]]; do sleep 0.02; done; done`,
    "echo ready",
    foreground ? "wait; sleep 999" : "exit 0",
  ].join("\n");
}

/** Prints `alive NAME PID` for each recorded process still running (same PID and start time, not a zombie). */
export function survivors(dir: string): string {
  return [
    `for f in ${dir}/*.pids; do`,
    "  while read -r p t; do",
    "    [[ $p == skip ]] && continue",
    "    { read -r s < /proc/$p/stat; } 2>/dev/null || continue",
    "    s=${s##*) }; set -- $s",
    '    [[ $1 == Z || ${20} != "$t" ]] && continue',
    '    echo "alive ${f##*/} $p"',
    '  done < "$f"',
    "done",
    "true",
  ].join("\n");
}

async function aliveAfter(env: Environment, dir: string): Promise<string[]> {
  const result = await env.execute(survivors(dir));
  return result.output.split("\n").filter((line) => line.startsWith("alive"));
}

/**
 * Backends whose plain-path wrapper shares its process group with the exec
 * machinery (see the close() test). Their fast-path jobs lead groups of their
 * own, but a session's first call may still take the plain path.
 */
const GROUPLESS_WRAPPER = new Set(["apptainer", "apptainer-plain", "daytona", "daytona-plain"]);

/**
 * The timeout case's deadline. The timer only starts the kill that the interrupt case starts by its signal (both
 * are `stop()` in core/collect-call.ts), so what it must leave is time for every shape to start: three times
 * what that took in the interrupt case just before on this entry (a machine three times slower still gets there), at
 * least 5 s (the load may rise between the two cases: a quick measure must not leave a tight deadline), and the
 * fixed 8 s it had before when there is no measure.
 */
function timeoutAfterReady(readyMs: number | undefined): number {
  if (readyMs === undefined) return 8000;
  return Math.min(8000, Math.max(5000, Math.ceil(3 * readyMs)));
}

/** An empty HOME: the host's own login profile may be slow or broken, and is not what this tests. */
const HOME = "/tmp/shellwright-orphans-home";
// The sandboxed local entries bind HOME writable, which must exist (sandbox.writable is validated).
beforeAll(() => mkdirSync(HOME, { recursive: true }));

for (const backend of compatBackends) {
  describe.skipIf(!backend.enabled)(`orphan matrix: ${backend.name}`, () => {
    const dirFor = (what: string): string => `/tmp/shellwright-orphans-${process.pid}-${backend.name}-${what}`;

    /** How long the interrupt case's call took to start every shape (and so the timeout case's deadline). */
    let readyMs: number | undefined;

    it("an interrupt leaves none of the call's processes alive", async () => {
      const env = await backend.create({ home: HOME, cwd: "/tmp", killGraceMs: 500 });
      try {
        const dir = dirFor("abort");
        const controller = new AbortController();
        const started = performance.now();
        const result = await env.execute(launch(dir, true), {
          timeoutMs: 60_000,
          signal: controller.signal,
          onOutput: (text) => {
            if (!text.includes("ready")) return;
            readyMs = performance.now() - started;
            controller.abort();
          },
        });
        expect(result.interrupted).toBe(true);
        expect(await aliveAfter(env, dir)).toEqual([]);
        await env.execute(`rm -rf ${dir}`);
      } finally {
        await env.close();
      }
    });

    it("a timeout leaves none of the call's processes alive", async () => {
      const env = await backend.create({ home: HOME, cwd: "/tmp", killGraceMs: 500 });
      try {
        const dir = dirFor("timeout");
        const timeoutMs = timeoutAfterReady(readyMs);
        const result = await env.execute(launch(dir, true), { timeoutMs });
        expect(result.output, `the shapes were not all started within the ${timeoutMs} ms timeout`).toContain("ready");
        expect(result.timedOut).toBe(true);
        expect(await aliveAfter(env, dir)).toEqual([]);
        await env.execute(`rm -rf ${dir}`);
      } finally {
        await env.close();
      }
    });

    it.skipIf(backend.ownPidNamespace === true)(
      "close() leaves none of the session's background processes alive",
      async () => {
        const dir = dirFor("close");
        const env = await backend.create({ home: HOME, cwd: "/tmp" });
        let closed = false;
        const checker = await backend.create({ home: HOME, cwd: "/tmp" });
        try {
          const started = await env.execute(launch(dir, false), { timeoutMs: 60_000 });
          expect(started.output).toContain("ready");
          expect(started.exitCode).toBe(0);
          // Still running between calls: they are the session's until it closes.
          expect((await aliveAfter(checker, dir)).length).toBeGreaterThan(0);
          await env.close();
          closed = true;
          const left = await aliveAfter(checker, dir);
          // Known gap (docs/guarantees.md): where the wrapper does not lead a
          // group of its own, a background `env -i` child whose call has ended
          // carries no mark and shares no group or session with the call.
          // The real Apptainer instance and Daytona sandbox end it when they
          // stop; these stand-ins run on the host, where nothing does.
          const gap = GROUPLESS_WRAPPER.has(backend.name) ? /^alive emptyEnv\.pids / : undefined;
          const tolerated = left.filter((line) => gap !== undefined && gap.test(line));
          // The test started them: it ends them, by PID.
          for (const line of tolerated) await checker.execute(`kill -KILL ${line.split(" ")[2]}`);
          expect(left.filter((line) => !tolerated.includes(line))).toEqual([]);
          await checker.execute(`rm -rf ${dir}`);
        } finally {
          if (!closed) await env.close();
          await checker.close();
        }
      },
    );
  });
}
