/**
 * No host Unix socket is reachable from inside the sandbox (issue 22 point 1):
 * the Docker Engine's socket is root on the host, and a read-only bind does
 * not stop connect(). Every socket a walk of the host's filesystem finds is
 * tried from the host (to know which ones answer) and from inside a
 * sandboxed session, where none may answer but the session's own proxy.
 * A socket this test listens on in the host's runtime dir makes sure there is
 * always at least one that answers on the host.
 */

import { execFileSync } from "node:child_process";
import { accessSync, constants, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../../../../src/index.js";
import { executeOn, HAVE_BWRAP, makeWorld, open, PATHS, SKIP_REASON, skipUnlessPath } from "./fixture.js";

/** A runtime dir this user may create a socket in: /run as root, else $XDG_RUNTIME_DIR. */
function runtimeDir(): string | undefined {
  for (const dir of ["/run", process.env.XDG_RUNTIME_DIR]) {
    if (dir === undefined || dir === "") continue;
    try {
      accessSync(dir, constants.W_OK);
      return dir;
    } catch {
      // not ours to write
    }
  }
  return undefined;
}

/** Every socket on the host: the root filesystem (as `find / -xdev`) and the runtime dirs, which are often their own tmpfs. */
function hostSockets(): string[] {
  const roots = ["/run", "/var/run", process.env.XDG_RUNTIME_DIR].filter((d): d is string => !!d);
  const found = new Set<string>();
  for (const args of [
    ["/", "-xdev", "-type", "s"],
    [...roots, "-type", "s"],
  ]) {
    let out = "";
    try {
      out = execFileSync("find", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    } catch (error) {
      out = String((error as { stdout?: string }).stdout ?? ""); // unreadable dirs make find exit 1
    }
    for (const line of out.split("\n")) if (line !== "") found.add(line);
  }
  return [...found].sort();
}

/** Which of `paths` accept a connection from the host (this process). */
async function answering(paths: string[]): Promise<string[]> {
  const results = await Promise.all(
    paths.map(
      (path) =>
        new Promise<string | undefined>((resolve) => {
          const socket = connect({ path });
          socket.once("connect", () => {
            socket.destroy();
            resolve(path);
          });
          socket.once("error", () => resolve(undefined));
        }),
    ),
  );
  return results.filter((p): p is string => p !== undefined);
}

/** The same from inside a session: a node script (this node, visible read-only) prints the ones that connected. */
const PROBE = `
const net = require("node:net");
const paths = JSON.parse(require("node:fs").readFileSync(process.argv[2], "utf8"));
let left = paths.length;
const done = () => { if (--left === 0) process.exit(0); };
if (left === 0) process.exit(0);
for (const path of paths) {
  const s = net.connect({ path });
  s.once("connect", () => { console.log("CONNECTED " + path); s.destroy(); done(); });
  s.once("error", () => done());
}
`;

async function answeringInside(
  env: Environment,
  fastPath: boolean,
  dir: string,
  paths: string[],
  tag: string,
): Promise<string[]> {
  writeFileSync(join(dir, `probe-${tag}.cjs`), PROBE);
  writeFileSync(join(dir, `paths-${tag}.json`), JSON.stringify(paths));
  const r = await executeOn(env, fastPath, `${JSON.stringify(process.execPath)} probe-${tag}.cjs paths-${tag}.json`);
  expect(r.exitCode, r.output).toBe(0);
  return [...r.output.matchAll(/^CONNECTED (.+)$/gm)].map((m) => m[1]!);
}

const DIR = runtimeDir();

describe.skipIf(!HAVE_BWRAP || DIR === undefined)(
  `local sandbox and the host's sockets (${HAVE_BWRAP ? "bwrap" : SKIP_REASON})`,
  () => {
    const world = makeWorld();
    const planted = join(DIR ?? "/run", `shellwright-test-${process.pid}-${Date.now()}.sock`);
    let listener: Server;

    beforeAll(async () => {
      listener = createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => listener.listen(planted, resolve));
    });
    afterAll(async () => {
      await new Promise((resolve) => listener?.close(resolve));
      rmSync(planted, { force: true });
      world.cleanup();
    });

    it.for(PATHS)(
      "reaches none of the host's sockets (network none, $name)",
      { timeout: 60_000 },
      async ({ fastPath }, context) => {
        skipUnlessPath(context, fastPath);
        const sockets = hostSockets();
        const onHost = await answering(sockets);
        expect(onHost).toContain(planted);
        if (process.env.SHELLWRIGHT_TEST_DOCKER === "1") expect(onHost).toContain("/run/docker.sock");
        const env = await open(world, true, undefined, fastPath);
        try {
          expect(
            await answeringInside(env, fastPath, world.work, onHost, `none-${fastPath ? "fast" : "plain"}`),
          ).toEqual([]);
          // The same walk from inside finds none of them either: they are not there to find.
          const seen = await executeOn(env, fastPath, `find /run /var/run -type s 2>/dev/null | wc -l`);
          expect(seen.output.trim()).toBe("0");
        } finally {
          await env.close();
        }
      },
    );

    it.for(PATHS)(
      "reaches only its own proxy with an allowlist ($name)",
      { timeout: 60_000 },
      async ({ fastPath }, context) => {
        skipUnlessPath(context, fastPath);
        const env = await open(world, true, { allow: ["example.com"] }, fastPath);
        try {
          // Walked while the session is open, so its proxy's socket is among them.
          const onHost = await answering(hostSockets());
          expect(onHost).toContain(planted);
          const inside = await answeringInside(
            env,
            fastPath,
            world.work,
            onHost,
            `allow-${fastPath ? "fast" : "plain"}`,
          );
          expect(inside.length).toBeLessThanOrEqual(1);
          for (const path of inside) expect(path).toMatch(/\/shellwright-proxy-[^/]+\/proxy\.sock$/);
        } finally {
          await env.close();
        }
      },
    );
  },
);
