/**
 * The local session cgroup: the one layer that also catches a process with an
 * empty environment in a session of its own (`setsid -f env -i …`), which no
 * mark, group or session id can find. Skipped where the host gives no
 * writable cgroup2 (most containers, non-root without delegation).
 */

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { createEnvironment } from "../../../src/index.js";
import { SessionCgroup } from "../../../src/backends/local/session-cgroup.js";
import { alive, eventually } from "../../helpers/processes.js";

const probe = SessionCgroup.create();
probe?.remove();

describe.skipIf(probe === undefined)("local session cgroup", () => {
  it("kills what left every other trace, and removes itself", async () => {
    const cgroup = SessionCgroup.create()!;
    const pidFile = `/tmp/shellwright-cgroup-test-${process.pid}`;
    const out = execFileSync("bash", [
      "-c",
      `setsid -f env -i bash -c 'echo $$ > ${pidFile}; exec sleep 4555' >/dev/null 2>&1; until [[ -s ${pidFile} ]]; do sleep 0.02; done; cat ${pidFile}`,
    ]);
    // The shell above ran outside the cgroup; start the escaper from inside it instead.
    void out;
    const inside = execFileSync("bash", [
      "-c",
      `echo $$ > ${cgroup.path}/cgroup.procs; setsid -f env -i bash -c 'echo $$ > ${pidFile}.in; exec sleep 4556' >/dev/null 2>&1; until [[ -s ${pidFile}.in ]]; do sleep 0.02; done; cat ${pidFile}.in`,
    ]);
    const outsidePid = Number(String(out).trim());
    const insidePid = Number(String(inside).trim());
    expect(alive(insidePid)).toBe(true);
    await cgroup.killAll();
    await eventually(() => !alive(insidePid), "the escaper in the cgroup is gone");
    cgroup.remove();
    expect(existsSync(cgroup.path)).toBe(false);
    // The one outside was never the cgroup's: end it (we started it), by PID.
    expect(alive(outsidePid)).toBe(true);
    process.kill(outsidePid, "SIGKILL");
  });

  it("removes empty cgroups whose owner is gone", () => {
    const cgroup = SessionCgroup.create()!;
    const stale = `${dirname(cgroup.path)}/shellwright-999999999-0123456789ab`;
    mkdirSync(stale);
    SessionCgroup.create()?.remove();
    expect(existsSync(stale)).toBe(false);
    cgroup.remove();
  });

  it("close() of a local session ends a process with no mark, group or session of the call", async () => {
    const env = await createEnvironment({
      backend: "local",
      cwd: "/tmp",
      env: { HOME: "/tmp/shellwright-orphans-home" },
    });
    const pidFile = `/tmp/shellwright-cgroup-close-${process.pid}`;
    const r = await env.execute(
      `setsid -f env -i bash -c 'echo $$ > ${pidFile}; exec sleep 4557' >/dev/null 2>&1; until [[ -s ${pidFile} ]]; do sleep 0.02; done; cat ${pidFile}`,
    );
    const pid = Number(r.output.trim());
    expect(alive(pid)).toBe(true);
    await env.close();
    expect(alive(pid)).toBe(false);
    expect(readFileSync(pidFile, "utf8").trim()).toBe(String(pid));
  });
});
