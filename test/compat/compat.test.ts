/**
 * One suite, every backend: the behaviour an agent relies on, whichever
 * backend runs its commands.
 */

import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment, ExecuteResult } from "../../src/index.js";
import { compatBackends, type CompatBackend } from "./backends.js";
import { aliveScript, eventually } from "../helpers/processes.js";

const MARKER_PREFIX = "__SHELLWRIGHT_";

function expectClean(result: ExecuteResult): void {
  expect(result.output).not.toContain(MARKER_PREFIX);
}

for (const backend of compatBackends) {
  describe.skipIf(!backend.enabled)(`compat: ${backend.name}`, () => {
    let env: Environment;
    let scratch: string;

    /** Runs a command in a fresh scratch-based session and closes it after. */
    async function withSession<T>(
      options: Parameters<CompatBackend["create"]>[0],
      fn: (session: Environment) => Promise<T>,
    ): Promise<T> {
      const session = await backend.create(options);
      try {
        return await fn(session);
      } finally {
        await session.close();
      }
    }

    /**
     * Runs a case on the entry's shared session, then puts its cwd back at / (also when the case failed), as the
     * cases on `run` do. For cases that change only what a call can undo (cwd, variables, files in the scratch
     * dir): a fresh session costs more than the case on the box entries (an open and a close, 2-7 s on a loaded
     * machine), and on the shared one the fast path's helper is already up, so its calls take the fast path
     * from the first. Cases about a session's start (its profile, its env, its init) or that leave what no call
     * can undo (readonly, a nameref on the marks, a hard limit, disabled builtins, options) keep `withSession`.
     */
    async function onShared<T>(fn: (session: Environment) => Promise<T>): Promise<T> {
      try {
        return await fn(env);
      } finally {
        await env.execute("cd /");
      }
    }

    async function run(command: string, options?: Parameters<Environment["execute"]>[1]): Promise<ExecuteResult> {
      const result = await env.execute(command, options);
      expectClean(result);
      return result;
    }

    /** Writes a login profile into a new HOME inside the backend and returns that HOME. */
    async function homeWithProfile(profile: string): Promise<string> {
      const home = `${scratch}/home-${Math.random().toString(16).slice(2)}`;
      const result = await env.execute(`mkdir -p ${home} && cat > ${home}/.bash_profile`, { stdin: profile });
      expect(result.exitCode).toBe(0);
      return home;
    }

    beforeAll(async () => {
      env = await backend.create();
      scratch = (await env.execute("mktemp -d")).output.trim();
      expect(scratch).toMatch(/^\//);
    });
    afterAll(async () => {
      await env.execute(`rm -rf ${scratch}`);
      await env.close();
    });

    describe("the spec's nine", () => {
      it("runs a simple command", async () => {
        const r = await run("echo hello");
        expect(r).toMatchObject({
          output: "hello\n",
          exitCode: 0,
          timedOut: false,
          interrupted: false,
          truncated: false,
        });
      });

      it("runs an empty or blank command as a no-op with exit 0, as bash -c '' does", async () => {
        for (const command of ["", "\n", "  "])
          expect(await env.execute(command)).toMatchObject({ output: "", exitCode: 0 });
      });

      it("keeps the exit code", async () => {
        expect((await run("exit 42")).exitCode).toBe(42);
        expect((await run("false")).exitCode).toBe(1);
      });

      it("persists cwd across calls", async () => {
        await run(`mkdir -p ${scratch}/d && cd ${scratch}/d`);
        const r = await run("pwd");
        expect(r.output.trim()).toBe(`${scratch}/d`);
        expect(r.cwd).toBe(`${scratch}/d`);
        await run("cd /");
      });

      it("persists exported variables across calls", async () => {
        await run("export SW_PERSIST=hello123");
        expect((await run("echo $SW_PERSIST")).output).toBe("hello123\n");
      });

      it("passes stdin", async () => {
        expect((await run("cat", { stdin: "line one\nline two\n" })).output).toBe("line one\nline two\n");
      });

      it("handles single quotes in commands", async () => {
        expect((await run(`echo 'it'"'"'s' "a 'b'"`)).output).toBe("it's a 'b'\n");
      });

      it("times out with exit 124 and says so", async () => {
        const r = await run("echo partial; sleep 30", { timeoutMs: 1000 });
        expect(r.exitCode).toBe(124);
        expect(r.timedOut).toBe(true);
        expect(r.output).toBe("partial\n\n[Command timed out after 1s]");
      });

      it("gives 126 when the cwd cannot be entered", async () => {
        const r = await run("echo never", { cwd: `${scratch}/does-not-exist` });
        expect(r.exitCode).toBe(126);
        expect(r.output).not.toContain("never");
      });

      it("reports binary output instead of garbling it", async () => {
        const r = await run("printf 'ok\\377\\376\\n'");
        expect(r.output).toBe("[binary output, 5 bytes]");
      });

      it("keeps text with a stray invalid byte, showing U+FFFD for it", async () => {
        const r = await run("seq 1 2000; printf 'bad byte: \\xe9\\n'");
        expect(r.output.split("\n").slice(0, 2000)).toEqual(Array.from({ length: 2000 }, (_, i) => String(i + 1)));
        expect(r.output.endsWith("\n2000\nbad byte: \ufffd\n")).toBe(true);
      });

      it("lists a directory holding a Latin-1 file name", async () => {
        const dir = `${scratch}/latin1`;
        const r = await run(`mkdir -p ${dir} && touch ${dir}/plain.txt "${dir}/$(printf 'caf\\351.txt')" && ls ${dir}`);
        expect(r.output).toBe("caf\ufffd.txt\nplain.txt\n");
      });

      it("still calls random bytes and a file with NUL bytes binary", async () => {
        expect((await run("head -c 4096 /dev/urandom")).output).toBe("[binary output, 4096 bytes]");
        expect((await run("printf 'name\\0value\\0'")).output).toBe("[binary output, 11 bytes]");
      });
    });

    describe("session state and completion", () => {
      /**
       * Rounds of the two-call race: the issue's numbers on docker, ssh and local (the fast paths), fewer where a
       * round is slow or fake, or the transport is one of those again (CI's time is bounded).
       */
      const raceRounds =
        backend.name === "docker" || backend.name === "ssh" || backend.name === "local"
          ? 150
          : backend.name.startsWith("local")
            ? 50
            : 25;

      it(`never tears env from cwd when two calls race (${raceRounds} rounds)`, async () => {
        await onShared(async (session) => {
          const ta = `${scratch}/race-a`;
          const tb = `${scratch}/race-b`;
          await session.execute(`mkdir -p ${ta} ${tb} && cd ${ta} && export W=start`);
          const seen = new Map<string, number>();
          for (let round = 0; round < raceRounds; round++) {
            await Promise.all([
              session.execute(`cd ${tb}; export W=first`),
              session.execute(`cd ${ta}; export W=last`),
            ]);
            const check = await session.execute(`echo "$W $PWD"; cd ${ta}`);
            const line = check.output.trim();
            seen.set(line, (seen.get(line) ?? 0) + 1);
            // One commit, whole: either call's env with that same call's cwd.
            expect([`first ${tb}`, `last ${ta}`]).toContain(line);
            expect(check.cwd).toBe(ta);
          }
          expect([...seen.keys()].every((line) => line === `first ${tb}` || line === `last ${ta}`)).toBe(true);
        });
      }, 300_000);

      it("reports the cwd of the state the next call starts from (10 rounds of two racing calls)", async () => {
        await onShared(async (session) => {
          await session.execute(`mkdir -p ${scratch}/rep-a ${scratch}/rep-b`);
          for (let round = 0; round < 10; round++) {
            await Promise.all([
              session.execute(`cd ${scratch}/rep-a; export R=a`),
              session.execute(`cd ${scratch}/rep-b; export R=b`),
            ]);
            const reported = session.cwd;
            const next = await session.execute(`echo "$R"; pwd`);
            const [r, pwd] = next.output.trim().split("\n");
            expect(pwd).toBe(`${scratch}/rep-${r}`);
            expect(`round ${round}: ${reported}`).toBe(`round ${round}: ${pwd}`);
          }
        });
      }, 120_000);

      for (const how of ["timeout", "interrupt"] as const) {
        it(`commits nothing from a call stopped by ${how}`, async () => {
          await onShared(async (session) => {
            await session.execute(`cd ${scratch} && export T=kept`);
            const controller = new AbortController();
            let seen = "";
            const r = await session.execute("export T=leaked; cd /; echo moved; sleep 30", {
              ...(how === "timeout"
                ? { timeoutMs: 1500 }
                : {
                    signal: controller.signal,
                    // Stopped once the export and the cd have run (not after a fixed delay): there is state to drop.
                    onOutput: (text) => (seen += text).includes("moved") && controller.abort(),
                  }),
            });
            expect(how === "timeout" ? r.timedOut : r.interrupted).toBe(true);
            expect(r.cwd).toBe(scratch);
            const after = await session.execute('echo "$T $PWD"');
            expect(after.output).toBe(`kept ${scratch}\n`);
            expect(after.cwd).toBe(scratch);
          });
        });
      }

      it("cannot be broken or blinded by the command's functions, aliases, options or PATH", async () => {
        await withSession({}, async (session) => {
          await session.execute(`cd ${scratch}`);
          const attacks = [
            ...[
              "eval",
              "builtin",
              "command",
              "cd",
              "printf",
              "unset",
              "declare",
              "trap",
              "mv",
              "read",
              "exit",
              "source",
            ].flatMap((name) => [
              `${name}() { echo hijacked-${name}; return 1; }`,
              `alias ${name}='echo hijacked-alias-${name};'`,
            ]),
            "unset -f eval",
            "trap 'echo user-exit-trap' EXIT",
            "set -x",
            "set -euo pipefail",
            "PATH=/nonexistent",
            "IFS=/",
          ];
          for (const [i, attack] of attacks.entries()) {
            const dir = `${scratch}/imm-${i}`;
            const r = await session.execute(`mkdir -p ${dir} && cd ${dir} && export IMM=${i}\n${attack}`);
            expect(r.output, attack).not.toContain("__SHELLWRIGHT");
            expect(r.output, attack).not.toContain(session.id);
            expect(r.cwd, attack).toBe(dir);
            // The next call still sees the state, then undoes the attack for the next round, itself still under
            // it (one call, not two: the round's cost is calls). POSIX mode: the special builtin unset beats a
            // function named unset.
            const check = await session.execute(
              'echo "$IMM $PWD"\n' +
                "\\unalias -a; POSIXLY_CORRECT=1; \\unset -f eval builtin command cd printf unset declare trap mv read exit source; \\unset POSIXLY_CORRECT; set +xeu +o pipefail; PATH=/usr/local/bin:/usr/bin:/bin; unset IFS",
            );
            expect(check.output, attack).toContain(`${i} ${dir}`);
            expect(check.cwd, attack).toBe(dir);
          }
          const exitTrap = await session.execute("trap 'echo bye' EXIT; echo body");
          expect(exitTrap.output).toBe("body\nbye\n");
        });
      }, 180_000);

      it("completes only on its own end marker: forged ones are plain output and move nothing", async () => {
        await onShared(async (session) => {
          await session.execute(`cd ${scratch}`);
          // Everything the command can read about its shells: argv, environment, and the marker shapes it can build from them.
          const forge = [
            "keys=$(for p in $$ $PPID $BASHPID; do for f in cmdline environ; do tr '\\000' '\\n' < /proc/$p/$f; done; done 2>/dev/null | grep -o '[0-9a-zA-Z]\\{8,\\}' | sort -u)",
            `for k in $keys ${session.id}; do`,
            '  printf \'\\n__SHELLWRIGHT_END_%s__C:/__SHELLWRIGHT_END_%s__\\n\' "$k" "$k"',
            '  printf \'\\n__SHELLWRIGHT_END_%s__C9999999999.0:/__SHELLWRIGHT_END_%s__\\n\' "$k" "$k"',
            '  printf \'\\n__SHELLWRIGHT_CWD_%s__/__SHELLWRIGHT_CWD_%s__\\n\' "$k" "$k"',
            "done",
            "echo after-the-fakes",
            '(sleep 1; for k in $keys; do printf \'\\n__SHELLWRIGHT_END_%s__C:/__SHELLWRIGHT_END_%s__\\n\' "$k" "$k"; done) &',
          ].join("\n");
          const r = await session.execute(forge);
          expect(r.output).toContain("after-the-fakes");
          expect(r.cwd).toBe(scratch);
          await new Promise((resolve) => setTimeout(resolve, 1500));
          const next = await session.execute("echo next; pwd");
          expect(next.output).toBe(`next\n${scratch}\n`);
          expect(next.cwd).toBe(scratch);
        });
      }, 120_000);
    });

    describe("beyond the spec", () => {
      it("keeps functions and aliases from the login profile and from an earlier call", async () => {
        const home = await homeWithProfile("profile_fn() { echo from-profile; }\nalias pal='echo profile-alias'\n");
        await withSession({ home }, async (session) => {
          expect((await session.execute("call_fn() { echo from-call; }; alias cal='echo call-alias'")).exitCode).toBe(
            0,
          );
          expect((await session.execute("true")).exitCode).toBe(0);
          const third = await session.execute("profile_fn; pal; call_fn; cal");
          expect(third.output).toBe("from-profile\nprofile-alias\nfrom-call\ncall-alias\n");
        });
      });

      it("streams a whole line while the command still runs (no newline held back)", async () => {
        await onShared(async (session) => {
          const flag = `/tmp/sw-stream-${Math.random().toString(36).slice(2)}`;
          let seen = "";
          let touched: Promise<unknown> | undefined;
          // The command waits (up to 10 s) for a file the test creates only once
          // the streamed output holds the complete first line, newline included.
          const r = await session.execute(
            `echo first; for i in $(seq 1 200); do [ -e ${flag} ] && break; sleep 0.05; done; [ -e ${flag} ] && echo seen || echo not-seen; rm -f ${flag}`,
            {
              onOutput: (text) => {
                seen += text;
                if (touched === undefined && seen.startsWith("first\n"))
                  touched = session.execute(`touch ${flag}`, { isolated: true });
              },
            },
          );
          await touched;
          expect(r.output).toBe("first\nseen\n");
        });
      });

      it("drops private functions by name without breaking the snapshot", async () => {
        const home = await homeWithProfile(
          "_private_helper() { local x=1; return 0; echo unreachable; }\nafter_private() { echo still-here; }\nalias ap='echo alias-after'\nexport AFTER_PRIVATE=yes\n",
        );
        await withSession({ home }, async (session) => {
          const r = await session.execute(
            "after_private; ap; echo $AFTER_PRIVATE; type _private_helper >/dev/null 2>&1 && echo leaked || echo filtered",
          );
          expect(r.output).toBe("still-here\nalias-after\nyes\nfiltered\n");
        });
      });

      it("keeps what a terminal keeps, but not set -e, set -u or traps", async () => {
        await withSession({}, async (session) => {
          const setup = await session.execute(
            `x=1; arr=(a "b c"); declare -A m=([k]=v); set -o pipefail -o noclobber -o noglob; umask 077; ulimit -S -n 512; trap 'echo trapped' USR1; set -e -u`,
          );
          expect(setup.exitCode).toBe(0);
          const r = await session.execute(
            [
              "declare -p x arr m",
              "set -o | while read -r o v; do case $o in errexit|noclobber|noglob|nounset|pipefail) echo $o $v;; esac; done",
              `rm -f ${scratch}/umask-probe; : > ${scratch}/umask-probe; stat -c %a ${scratch}/umask-probe`,
              "umask; ulimit -S -n",
              'echo "traps:[$(trap -p USR1)]"',
              'echo "unset var:[$never_set]"; false; echo "after false"',
            ].join("\n"),
          );
          expect(r.output).toBe(
            [
              'declare -- x="1"',
              'declare -a arr=([0]="a" [1]="b c")',
              'declare -A m=([k]="v" )',
              "errexit off",
              "noclobber on",
              "noglob on",
              "nounset off",
              "pipefail on",
              "600",
              "0077",
              "512",
              "traps:[]",
              "unset var:[]",
              "after false",
              "",
            ].join("\n"),
          );
        });
      });

      it("makes unset stick, even for a variable from the starting environment", async () => {
        await withSession({ env: { SW_INHERITED: "from-env" } }, async (session) => {
          expect((await session.execute("echo $SW_INHERITED")).output).toBe("from-env\n");
          await session.execute("unset SW_INHERITED");
          expect((await session.execute('echo "[${SW_INHERITED-unset}]"')).output).toBe("[unset]\n");
        });
      });

      it("keeps env and cwd when the command calls exit", async () => {
        const r = await run(`cd ${scratch} && export SW_EXIT=kept; exit 3`);
        expect(r.exitCode).toBe(3);
        expect((await run("echo $SW_EXIT; pwd")).output).toBe(`kept\n${scratch}\n`);
        await run("cd /");
      });

      it("never leaves a torn snapshot under concurrent calls", async () => {
        await onShared(async (session) => {
          await session.execute("export SW_CANARY=alive; canary_fn() { echo fn-alive; }");
          for (let round = 0; round < 6; round++) {
            // Every call sources whatever snapshot is current when it starts: a
            // torn one would lose the canary or the function.
            const results = await Promise.all(
              Array.from({ length: 8 }, (_, i) =>
                session.execute(`echo $SW_CANARY; canary_fn; export SW_C${round}_${i}=${i}`),
              ),
            );
            for (const r of results) expect(r).toMatchObject({ exitCode: 0, output: "alive\nfn-alive\n" });
            const check = await session.execute(`echo $SW_CANARY; canary_fn; env | grep -c '^SW_C${round}_'`);
            const [canary, fn, count] = check.output.trim().split("\n");
            expect([canary, fn]).toEqual(["alive", "fn-alive"]);
            // Last writer wins: at least its own variable survives.
            expect(Number(count)).toBeGreaterThanOrEqual(1);
            expect(Number(count)).toBeLessThanOrEqual(8);
          }
        });
      });

      it("writes the snapshot (which holds the cwd) with mode 0600", async () => {
        await run(`cd ${scratch}`);
        const r = await run(`stat -c %a ${env.paths.snapshot}`);
        expect(r.output.split("\n").filter(Boolean)).toEqual(["600"]);
        await run("cd /");
      });

      it("gives cat an empty stdin instead of hanging", async () => {
        const r = await run("cat; read -r line; echo read=$?", { timeoutMs: 10_000 });
        expect(r).toMatchObject({ timedOut: false, exitCode: 0, output: "read=1\n" });
      });

      it("delivers stdin bytes exactly", async () => {
        expect((await run("od -An -c", { stdin: "abc" })).output.trim()).toBe("a   b   c");
        const bytes = Uint8Array.from({ length: 255 }, (_, i) => i + 1);
        const hex = (await run("od -An -v -tx1 | tr -d ' \\n'", { stdin: bytes })).output;
        expect(hex).toBe(Buffer.from(bytes).toString("hex"));
        const tricky = "EOF\n__SHELLWRIGHT_STDIN_x\n'\"$`\\\nlast";
        expect((await env.execute("cat", { stdin: tricky })).output).toBe(tricky);
      });

      it("returns at once from a command that leaves a background job", async () => {
        const r = await run("sleep 30 & echo started", { timeoutMs: 5000 });
        expect(r).toMatchObject({ output: "started\n", exitCode: 0, timedOut: false });
      });

      for (const how of ["timeout", "signal"] as const) {
        it(`kills child and grandchild on ${how} and stays usable`, async () => {
          const dir = `${scratch}/kill-${how}`;
          await run(`mkdir -p ${dir}`);
          const command = `(sleep 300 & echo $! > ${dir}/grandchild; wait) & echo $! > ${dir}/child; echo spawned; wait`;
          let r: ExecuteResult;
          if (how === "timeout") {
            r = await run(command, { timeoutMs: 1500 });
            expect(r.exitCode).toBe(124);
          } else {
            const controller = new AbortController();
            const pending = run(command, {
              signal: controller.signal,
              onOutput: (text) => text.includes("spawned") && setTimeout(() => controller.abort(), 200),
            });
            r = await pending;
            expect(r.exitCode).toBe(130);
            expect(r.output).toBe("spawned\n\n[Command interrupted]");
          }
          const alive = await run(aliveScript([`${dir}/child`, `${dir}/grandchild`]));
          expect(alive.output).toBe("");
          expect((await run("echo usable")).output).toBe("usable\n");
        });
      }

      it("survives readonly on PWD, OLDPWD, IFS and the kill marks: later calls run clean and are still killed whole", async () => {
        await withSession({}, async (session) => {
          const dir = (await session.execute("mktemp -d")).output.trim();
          const ro = await session.execute("cd /tmp; readonly PWD OLDPWD IFS SHELLWRIGHT_CALL SHELLWRIGHT_SESSION");
          expect(ro).toMatchObject({ output: "", exitCode: 0 });
          const marks = [];
          for (let i = 0; i < 2; i++) {
            const r = await session.execute(`cd ${dir} && cd - >/dev/null && echo "$PWD $SHELLWRIGHT_CALL"`);
            expect(r.exitCode).toBe(0);
            const [pwd, mark] = r.output.trim().split(" ");
            expect(pwd).toBe("/tmp");
            marks.push(mark);
          }
          // Each call has its own mark again, not the one pinned by readonly.
          expect(new Set(marks).size).toBe(2);
          // A later call's setsid child carries that call's mark, so the timeout still finds it.
          const timedOut = await session.execute(`setsid sleep 300 & echo $! > ${dir}/child; wait`, {
            timeoutMs: 1500,
          });
          expect(timedOut.exitCode).toBe(124);
          expect(timedOut.output).not.toMatch(/readonly/);
          expect((await session.execute(aliveScript([`${dir}/child`]))).output).toBe("");
          await session.execute(`rm -rf ${dir}`);
        });
      });

      it("keeps a nameref on the kill marks out of the snapshot: later calls carry their own exported marks", async () => {
        await withSession({}, async (session) => {
          const ref = await session.execute("declare -n SHELLWRIGHT_CALL=sw_target SHELLWRIGHT_SESSION=sw_target2");
          expect(ref).toMatchObject({ output: "", exitCode: 0 });
          const marks = [];
          for (let i = 0; i < 2; i++) {
            const r = await session.execute('declare -p SHELLWRIGHT_CALL; echo "${sw_target-unset}"');
            expect(r.exitCode).toBe(0);
            // A plain exported variable again (a restored nameref would export the mark as sw_target instead).
            expect(r.output).toMatch(/^declare -x SHELLWRIGHT_CALL="[^"]+"\nunset\n$/);
            marks.push(r.output);
          }
          expect(new Set(marks).size).toBe(2);
        });
      });

      it("keeps a file size limit the command set, as a terminal does; the plain path says it could not save", async () => {
        await withSession({}, async (session) => {
          const fast = !backend.name.endsWith("-plain");
          // The box backends start their helper after the session opens; until then calls take the plain path.
          if (fast)
            await eventually(
              async () => /^swmux/.test((await session.execute("cat /proc/$PPID/comm")).output),
              "the fast path's helper",
            );
          await session.execute("export KEPT=1; kept() { echo fine; }");
          // Root with CAP_SYS_RESOURCE can lift a hard limit for the dump: every path saves the state then.
          const liftable = (await session.execute("(ulimit -f 2; ulimit -f unlimited) 2>/dev/null && echo yes")).output;
          // Two 1 KiB blocks, hard: room for the dump's first lines, not the rest. The command ignores SIGXFSZ
          // itself, so a dump written to a file fails write by write: a snapshot cut short must not be committed.
          const cut = await session.execute("trap '' XFSZ; ulimit -f 2; export LOST=1; echo did");
          // The fast path's helper takes the dump through a pipe, which no `ulimit -f` cuts (issue 37).
          if (liftable === "yes\n" || fast) {
            expect(cut).toMatchObject({ output: "did\n", exitCode: 0 });
            // And it holds: a file stops at two blocks.
            const next =
              "echo $KEPT $LOST; kept; ulimit -f; (d=$(mktemp -d); head -c 4096 /dev/zero > $d/big; stat -c %s $d/big; rm -r $d) 2>/dev/null";
            expect((await session.execute(next)).output).toBe("1 1\nfine\n2\n2048\n");
            return;
          }
          expect(cut).toMatchObject({
            output:
              "did\n\n[shellwright: this call's state could not be saved: the file size limit (`ulimit -f 2`) is too small for it; the session keeps the state it had before this call]",
            exitCode: 0,
          });
          expect((await session.execute("echo $KEPT ${LOST-unset}; kept; ulimit -f")).output).toBe(
            "1 unset\nfine\nunlimited\n",
          );
          // A soft limit is the user's state like any other: kept, and no obstacle to the next dumps.
          expect(await session.execute("ulimit -S -f 1; export SOFT=1; echo did")).toMatchObject({
            output: "did\n",
            exitCode: 0,
          });
          expect((await session.execute("echo $SOFT; ulimit -S -f")).output).toBe("1\n1\n");
          expect((await session.execute("export MORE=1")).exitCode).toBe(0);
          expect((await session.execute("echo $SOFT$MORE")).output).toBe("11\n");
        });
      });

      it("saves the state of a call that disabled the builtins the dump uses", async () => {
        await withSession({}, async (session) => {
          expect(await session.execute("enable -n printf echo read declare; export AFTER=1")).toMatchObject({
            output: "",
            exitCode: 0,
          });
          expect((await session.execute('echo "$AFTER"')).output).toBe("1\n");
          expect(await session.execute("enable -n builtin; export AFTER=2")).toMatchObject({ output: "", exitCode: 0 });
          expect((await session.execute('echo "$AFTER"; type -t builtin')).output).toBe("2\nbuiltin\n");
        });
      });

      it("keeps a cwd deeper than PATH_MAX and runs the next calls there, as a terminal does (issue 37)", async () => {
        await onShared(async (session) => {
          await session.execute(`mkdir -p ${scratch}/deep && cd ${scratch}`);
          const name = "d".repeat(200);
          // Step by step, relative: the only way a shell gets there, and how the next call must get there again.
          const deep = await session.execute(
            `cd ${scratch}/deep && for i in $(seq 25); do mkdir ${name} && cd ${name} || break; done; touch here; echo \${#PWD}`,
          );
          const length = Number(deep.output);
          expect(length).toBeGreaterThan(4096);
          expect(deep).toMatchObject({ exitCode: 0, output: `${length}\n` });
          const path = `${scratch}/deep${`/${name}`.repeat(25)}`;
          expect(deep.cwd).toBe(path);
          // The next call runs there: its own relative file, the same getcwd(), a variable set there kept too.
          const next = await session.execute('ls; pwd -P | wc -c; export DEEP=1; cd ..; echo "${#PWD}"');
          expect(next).toMatchObject({ exitCode: 0, output: `here\n${length + 1}\n${length - 201}\n` });
          expect(next.cwd).toBe(path.slice(0, -201));
          // A pure command (the fast path's skipped dump) there, and the way back out.
          expect(await session.execute("cd " + name + " && ls")).toMatchObject({ exitCode: 0, output: "here\n" });
          expect(await session.execute("ls; echo $DEEP")).toMatchObject({ exitCode: 0, output: "here\n1\n" });
          // Deleted under the session: the nearest ancestor it can enter, said as for any deleted cwd.
          await session.execute(`rm -rf ${scratch}/deep/${name}`, { cwd: "/" });
          const gone = await session.execute("pwd");
          expect(gone.output).toBe(
            `shellwright: the session's directory ${path} no longer exists; running in ${scratch}/deep\n${scratch}/deep\n`,
          );
          await session.execute(`rm -rf ${scratch}/deep`, { cwd: "/" });
        });
      });

      it("counts line numbers from the command's first line, as a terminal does (issue 22.9)", async () => {
        const missing = await run("nosuchcmd_sw");
        expect(missing.exitCode).toBe(127);
        expect(missing.output).toMatch(/^bash: (line 1: )?nosuchcmd_sw: command not found\n$/);
        expect((await run("echo $LINENO")).output).toBe("1\n");
        expect((await run("echo $LINENO\necho $LINENO; f() { echo $LINENO; }; f")).output).toBe("1\n2\n2\n");
        expect((await run("echo $LINENO", { isolated: true })).output).toBe("1\n");
        expect((await run('echo "$0 $#"')).output).toBe("bash 0\n");
      });

      it("moves to the nearest existing ancestor when the session's directory is deleted", async () => {
        await run(`mkdir -p ${scratch}/doomed/deeper && cd ${scratch}/doomed/deeper`);
        await run(`rm -rf ${scratch}/doomed`);
        const first = await run("pwd");
        expect(first.exitCode).toBe(0);
        expect(first.output).toBe(
          `shellwright: the session's directory ${scratch}/doomed/deeper no longer exists; running in ${scratch}\n${scratch}\n`,
        );
        expect(first.cwd).toBe(scratch);
        expect((await run("pwd")).output).toBe(`${scratch}\n`);
        await run(`mkdir -p ${scratch}/doomed2 && cd ${scratch}/doomed2`);
        await run(`rm -rf ${scratch}/doomed2`);
        const moved = await run("cd / && pwd");
        expect(moved).toMatchObject({ exitCode: 0, cwd: "/" });
        expect(moved.output).toContain("no longer exists");
        expect((await run("pwd")).output).toBe("/\n");
      });

      it("commits what a function or alias named like a program changed, and a cwd a program renamed", async () => {
        // `ls`, `true` and `pwd` look like commands that change nothing (the fast
        // path skips its state dump for those): here they change the state.
        await run(`mkdir -p ${scratch}/pure && cd ${scratch}/pure`);
        await run("shopt -s expand_aliases; ls() { export PURE_FN=1; }; alias true='cd /'; pwd() { builtin cd /tmp; }");
        await run("ls");
        expect((await run("echo ${PURE_FN-unset}")).output).toBe("1\n");
        expect((await run("true")).cwd).toBe("/");
        expect((await run("pwd")).cwd).toBe("/tmp");
        await run(`unset -f ls pwd; unalias true; unset PURE_FN; cd ${scratch}/pure`);
        await run(`mv ${scratch}/pure ${scratch}/pure2`);
        expect((await run("pwd")).output).toBe(`${scratch}/pure2\n`);
        await run("cd /");
      });

      it("runs a per-call cwd without moving the session", async () => {
        await run("cd /");
        expect((await run("pwd", { cwd: scratch })).output).toBe(`${scratch}\n`);
        expect((await run("pwd")).output).toBe("/\n");
        await run("cd tmp", { cwd: "/" });
        expect((await run("pwd")).output).toBe("/tmp\n");
        await run("cd /");
      });

      it("leaves env and cwd untouched after an isolated call, which still sees them", async () => {
        await run("cd / && export SW_ISOLATED_SEEN=before");
        const isolated = await run("echo $SW_ISOLATED_SEEN; export SW_ISOLATED_SEEN=after; cd tmp", { isolated: true });
        expect(isolated.output).toBe("before\n");
        expect(isolated.cwd).toBe("/");
        expect((await run("echo $SW_ISOLATED_SEEN; pwd")).output).toBe("before\n/\n");
      });

      it("keeps the launching PATH in front of the login profile's", async () => {
        const home = await homeWithProfile("export PATH=/usr/bin:/bin\n");
        await withSession(
          { home, env: { PATH: `/opt/sw-launch-bin:/usr/local/bin:/usr/bin:/bin` } },
          async (session) => {
            expect((await session.execute("echo $PATH")).output).toMatch(/^\/opt\/sw-launch-bin:/);
          },
        );
      });

      it("falls back to bash -l when init fails", async () => {
        // The profile kills the init shell only (it alone carries the pre-login PATH).
        const home = await homeWithProfile('[ -n "$__SHELLWRIGHT_PRE_PATH" ] && kill -9 $$\nexport FROM_PROFILE=yes\n');
        const warnings: string[] = [];
        await withSession({ home, onWarning: (m) => warnings.push(m) }, async (session) => {
          expect(session.snapshotReady).toBe(false);
          expect((await session.execute("echo $FROM_PROFILE")).output).toBe("yes\n");
          await session.execute(`cd ${scratch}`);
          expect((await session.execute("pwd")).output).toBe(`${scratch}\n`);
        });
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toContain("bash -l");
      });

      it("round-trips any string through printf %s", async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.string({ unit: "grapheme", maxLength: 60 }).filter((s) => !s.includes("\0")),
            async (s) => {
              const r = await env.execute(`printf %s ${"'" + s.replaceAll("'", "'\\''") + "'"}`);
              expect(r.output).toBe(s);
              const direct = await env.execute(`printf '%s' "$(cat)"`, { stdin: s });
              expect(direct.output).toBe(s.replace(/\n+$/, ""));
            },
          ),
          { numRuns: 25 },
        );
        await fc.assert(
          fc.asyncProperty(
            fc.string({ unit: "binary", maxLength: 40 }).filter((s) => !s.includes("\0")),
            async (s) => {
              const quoted = "'" + s.replaceAll("'", "'\\''") + "'";
              expect((await env.execute(`printf %s ${quoted}`)).output).toBe(s);
            },
          ),
          { numRuns: 25 },
        );
      });

      it("never shows the marker, even to a command that prints its own command line", async () => {
        const r = await env.execute("tr '\\0' ' ' < /proc/$$/cmdline; echo; printf '__SHELLWRIGHT_CWD_%s__' fake");
        expect(r.output).not.toContain(`__SHELLWRIGHT_CWD_${env.id}__`);
        expect(r.output).toContain("__SHELLWRIGHT_CWD_fake__");
      });
    });
  });
}
