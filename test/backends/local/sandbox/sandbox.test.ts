/** The session still works inside the sandbox, and its kill paths still reach every process. */

import { chmodSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../../../../src/index.js";
import { createEnvironment } from "../../../../src/index.js";
import { HAVE_BWRAP, makeWorld, open, pidsWithMark, SKIP_REASON, waitGone } from "./fixture.js";

describe.skipIf(!HAVE_BWRAP)(`local sandbox session (${HAVE_BWRAP ? "bwrap" : SKIP_REASON})`, () => {
  const world = makeWorld();
  let env: Environment;

  beforeAll(async () => {
    env = await open(world, true);
  });
  afterAll(async () => {
    await env?.close();
    world.cleanup();
  });

  it("keeps cwd, exported variables and functions between calls", async () => {
    await env.execute("mkdir -p sub && cd sub && export SW_VAR=kept && swf() { echo from-function; }");
    const r = await env.execute('pwd; echo "$SW_VAR"; swf');
    expect(r.output).toBe(`${join(world.work, "sub")}\nkept\nfrom-function\n`);
    await env.execute(`cd ${world.work}`);
  });

  it("has a private, writable /tmp that lasts the session", async () => {
    await env.execute("echo kept > /tmp/sw-private");
    expect((await env.execute("cat /tmp/sw-private")).output).toBe("kept\n");
  });

  it("keeps the session's own files writable inside and private outside", async () => {
    const dir = dirname(env.paths.snapshot);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect((await env.execute(`touch ${dir}/probe && echo ok`)).output).toBe("ok\n");
  });

  it("reports 124 on a timeout and kills the whole tree", async () => {
    const mark = "sw-timeout-tree";
    const r = await env.execute(`bash -c 'exec -a ${mark} sleep 300' & bash -c 'exec -a ${mark} sleep 300'`, {
      timeoutMs: 500,
    });
    expect(r.exitCode).toBe(124);
    expect(await waitGone(mark)).toEqual([]);
  });

  it("reports 130 on an interrupt", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const r = await env.execute("sleep 300", { signal: controller.signal });
    expect(r.exitCode).toBe(130);
  });

  it("reports 126 for a file that is not executable", async () => {
    writeFileSync(join(world.work, "not-exec.sh"), "echo hi\n");
    chmodSync(join(world.work, "not-exec.sh"), 0o644);
    expect((await env.execute("./not-exec.sh")).exitCode).toBe(126);
  });

  it("keeps a background job running after its call, and ends it on close", async () => {
    const session = await open(world, true);
    const mark = "sw-bg-close";
    await session.execute(`bash -c 'exec -a ${mark} sleep 300' >/dev/null 2>&1 &`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(pidsWithMark(mark).length).toBe(1);
    await session.close();
    expect(await waitGone(mark)).toEqual([]);
  });

  it("runs with no capabilities", async () => {
    const r = await env.execute("grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status");
    expect(r.output).toMatch(/CapEff:\s+0+\n/);
    expect(r.output).toMatch(/CapBnd:\s+0+\n/);
  });

  it("refuses a writable path that does not exist, naming the option", async () => {
    await expect(
      createEnvironment({ backend: "local", cwd: world.work, sandbox: { writable: ["./missing"] } }),
    ).rejects.toThrow(/sandbox\.writable\[0\].*does not exist/);
  });
});
