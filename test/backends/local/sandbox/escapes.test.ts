/**
 * The sandbox proved by escapes: each one is tried without the sandbox (where
 * it must succeed, or the test proves nothing) and with it (where it must fail).
 * Real bubblewrap; skipped only when bwrap is not installed.
 */

import { symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../../../../src/index.js";
import { callTool } from "../../../../src/tools/registry.js";
import {
  executeOn,
  HAVE_BWRAP,
  skipUnlessPath,
  makeWorld,
  open,
  pidsWithMark,
  read,
  SKIP_REASON,
  waitGone,
  type World,
} from "./fixture.js";
import { noLocalHelper } from "../../../helpers/native-helper.js";

interface Escape {
  name: string;
  /** Runs the attempt in `env`; true when it got out. */
  attempt(env: Environment, world: World, tag: string): Promise<boolean>;
}

/** Attaches to pid argv[1] and lets go again; prints "attached" or the errno's name. */
const PTRACE_ATTACH = [
  "import ctypes, errno, os, sys",
  "libc = ctypes.CDLL(None, use_errno=True)",
  "pid = int(sys.argv[1])",
  "if libc.ptrace(16, pid, 0, 0) == 0:",
  "    os.waitpid(pid, 0x40000000)",
  "    libc.ptrace(17, pid, 0, 0)",
  '    print("attached")',
  "else:",
  "    print(errno.errorcode[ctypes.get_errno()])",
].join("\n");

let listener: Server;
let listenerPort = 0;
let connections = 0;

const ESCAPES: Escape[] = [
  {
    name: "writes outside `writable` by absolute path",
    async attempt(env, world, tag) {
      await env.execute(`echo pwned > ${join(world.outside, `abs-${tag}`)}`);
      return read(join(world.outside, `abs-${tag}`)) === "pwned\n";
    },
  },
  {
    name: "writes outside `writable` through ..",
    async attempt(env, world, tag) {
      await env.execute(`echo pwned > ../outside/dotdot-${tag}`);
      return read(join(world.outside, `dotdot-${tag}`)) === "pwned\n";
    },
  },
  {
    name: "writes through a symlink planted in the writable dir",
    async attempt(env, world, tag) {
      symlinkSync(world.outside, join(world.work, `link-${tag}`));
      await env.execute(`echo pwned > link-${tag}/sym-${tag}`);
      return read(join(world.outside, `sym-${tag}`)) === "pwned\n";
    },
  },
  {
    name: "writes through a hard link made from inside",
    async attempt(env, world, tag) {
      const target = join(world.outside, `hard-${tag}`);
      writeFileSync(target, "original\n");
      await env.execute(`ln ${target} hl-${tag} && echo pwned > hl-${tag}`);
      return read(target) === "pwned\n";
    },
  },
  {
    name: "writes outside `writable` with the write_file tool",
    async attempt(env, world, tag) {
      await callTool("write_file", { path: join(world.outside, `tool-${tag}`), content: "pwned\n" }, { session: env });
      return read(join(world.outside, `tool-${tag}`)) === "pwned\n";
    },
  },
  {
    name: "writes outside `writable` from execute_code",
    async attempt(env, world, tag) {
      const path = join(world.outside, `code-${tag}`);
      await callTool(
        "execute_code",
        { code: `open(${JSON.stringify(path)}, "w").write("pwned\\n")` },
        { session: env },
      );
      return read(path) === "pwned\n";
    },
  },
  {
    name: "reads a denyRead directory's file",
    async attempt(env, world) {
      return (await env.execute(`cat ${world.secretDir}/key`)).output.includes(world.secret);
    },
  },
  {
    name: "reads a denyRead file",
    async attempt(env, world) {
      return (await env.execute(`cat ${world.secretFile}`)).output.includes(world.secret);
    },
  },
  {
    name: "reads a denyRead file via /proc/self/root",
    async attempt(env, world) {
      return (await env.execute(`cat /proc/self/root${world.secretDir}/key`)).output.includes(world.secret);
    },
  },
  {
    name: "reads a denyRead file via a planted symlink",
    async attempt(env, world, tag) {
      symlinkSync(join(world.secretDir, "key"), join(world.work, `secret-link-${tag}`));
      return (await env.execute(`cat secret-link-${tag}`)).output.includes(world.secret);
    },
  },
  {
    name: "reads a denyRead file with the read_file tool",
    async attempt(env, world) {
      const result = await callTool("read_file", { path: world.secretFile }, { session: env });
      return JSON.stringify(result).includes(world.secret);
    },
  },
  {
    name: "connects to a listening loopback port on the host",
    async attempt(env) {
      const before = connections;
      await env.execute(`exec 3<>/dev/tcp/127.0.0.1/${listenerPort} && echo hi >&3`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return connections > before;
    },
  },
  {
    name: "creates a user namespace (unshare -U)",
    async attempt(env) {
      return (await env.execute("unshare -U -r true && echo ESCAPED")).output.includes("ESCAPED");
    },
  },
  {
    name: "creates a mount namespace (unshare -m)",
    async attempt(env) {
      return (await env.execute("unshare -m true && echo ESCAPED")).output.includes("ESCAPED");
    },
  },
  {
    name: "enters a host process's namespaces (nsenter)",
    async attempt(env) {
      const out = await env.execute(`nsenter -t ${process.pid} -m -n true && echo ESCAPED`);
      return out.output.includes("ESCAPED");
    },
  },
  {
    name: "mounts a filesystem",
    async attempt(env, _world, tag) {
      const out = await env.execute(
        `mkdir -p m-${tag} && mount -t tmpfs none m-${tag} && umount m-${tag} && echo ESCAPED`,
      );
      return out.output.includes("ESCAPED");
    },
  },
  {
    // Without the sandbox only a process that evades every kill layer outlives
    // close(): it leaves its group and session, empties its environment (the
    // marks) and, as root, moves itself out of the session cgroup.
    name: "keeps a background process (setsid, env -i, out of the session cgroup) alive after close",
    async attempt(env, _world, tag) {
      const mark = `sw-bg-${tag}`;
      const body = `m=$(while read -r _ p t _; do [ "$t" = cgroup2 ] && { echo "$p"; break; }; done < /proc/mounts); echo $$ > "$m/cgroup.procs" 2>/dev/null; exec -a ${mark} sleep 300`;
      await env.execute(`setsid -f env -i bash -c '${body}' >/dev/null 2>&1 &`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (pidsWithMark(mark).length === 0) throw new Error("the background process did not start");
      await env.close();
      const left = await waitGone(mark, 1500);
      for (const pid of left) process.kill(pid, "SIGKILL"); // ours: started by this test
      return left.length > 0;
    },
  },
];

describe.skipIf(!HAVE_BWRAP)(`local sandbox escapes (${HAVE_BWRAP ? "bwrap" : SKIP_REASON})`, () => {
  const world = makeWorld();
  let plain: Environment;
  /** Sandboxed, on the fast path and on the plain path: each enters the sandbox its own way. */
  let boxed: Environment;
  let boxedPlain: Environment;

  beforeAll(async () => {
    listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    listenerPort = (listener.address() as { port: number }).port;
    plain = await open(world, false);
    boxed = await open(world, true);
    boxedPlain = await open(world, true, undefined, false);
    // A stale or missing helper would let every "fast path" attempt take the plain path unnoticed.
    if (noLocalHelper === undefined) await executeOn(boxed, true, "true");
    await executeOn(boxedPlain, false, "true");
  });

  afterAll(async () => {
    await plain?.close();
    await boxed?.close();
    await boxedPlain?.close();
    listener?.close();
    world.cleanup();
  });

  it("a command cannot PTRACE_ATTACH the fast-path helper from inside (issue 37.5)", async (context) => {
    skipUnlessPath(context, true);
    // The helper is the job's $PPID (a fork of its launcher keeps it). Attached, a command could write frames to Node.
    const attach = `python3 -c '${PTRACE_ATTACH}' $PPID`;
    expect((await executeOn(boxed, true, attach)).output).toBe("EPERM\n");
    // What not being dumpable leaves open, as docs/guarantees.md says: root outside the sandbox holds CAP_SYS_PTRACE.
    if (process.getuid?.() === 0) expect((await executeOn(plain, true, attach)).output).toBe("attached\n");
  });

  // Only root may move itself out of the session cgroup, so only root has a
  // plain-session control for the close() escape.
  const escapes = ESCAPES.filter((e) => !e.name.includes("after close") || process.getuid?.() === 0);
  for (const [index, escape] of escapes.entries()) {
    it(`${escape.name}: works without the sandbox, fails inside it`, async () => {
      const last = escape.name.includes("after close");
      const without = last ? await open(world, false) : plain;
      expect(await escape.attempt(without, world, `plain${index}`)).toBe(true);
      for (const fastPath of [true, false]) {
        const inside = last ? await open(world, true, undefined, fastPath) : fastPath ? boxed : boxedPlain;
        const tag = `boxed${fastPath ? "" : "-plain"}${index}`;
        expect(await escape.attempt(inside, world, tag), fastPath ? "fast path" : "plain path").toBe(false);
      }
    }, 60_000);
  }
});
