/** Session.execute({saveState: false}) and Session.beforeClose: what the tools' housekeeping relies on. */

import { afterEach, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../src/index.js";
import { buildCommandScript, sessionPaths } from "../../src/core/script.js";

let session: Environment | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

describe("saveState: false", () => {
  it("starts from the session state but changes nothing", async () => {
    session = await createEnvironment({ cwd: "/" });
    await session.execute("export KEPT=1; cd /tmp");
    const r = await session.execute("echo $KEPT $PWD; export KEPT=2 LOST=1; cd /usr", { saveState: false });
    expect(r.output).toBe("1 /tmp\n");
    expect(r.cwd).toBe("/tmp");
    expect((await session.execute("echo $KEPT ${LOST:-unset} $PWD")).output).toBe("1 unset /tmp\n");
  });

  it("finishing last does not undo a concurrent export", async () => {
    session = await createEnvironment({ cwd: "/" });
    const slow = session.execute("sleep 0.5", { saveState: false });
    await session.execute("export SET_MEANWHILE=yes");
    await slow;
    expect((await session.execute("echo $SET_MEANWHILE")).output).toBe("yes\n");
  });

  it("writes neither the snapshot nor the cwd file", () => {
    const plan = {
      sessionId: "abcdefabcdef",
      paths: sessionPaths("/t", "abcdefabcdef"),
      callId: "c1",
      renameInScript: true,
      writeCwdFile: true,
      command: "true",
      cwd: "/",
      snapshotReady: true,
      stdinOnPipe: false,
      reportPid: false,
    };
    const saving = buildCommandScript(plan);
    const readOnly = buildCommandScript({ ...plan, saveState: false });
    expect(saving).toContain("export -p");
    expect(saving).toContain(".txt.c1.tmp");
    expect(readOnly).not.toContain("export -p");
    expect(readOnly).not.toContain(".txt.c1.tmp");
    expect(readOnly).toContain("__SHELLWRIGHT_CWD_"); // completion still needs the marker
  });

  it("rejects a non-boolean", async () => {
    session = await createEnvironment({});
    await expect(session.execute("true", { saveState: "no" as unknown as boolean })).rejects.toThrow(/saveState must be a boolean, got "no"/);
  });
});

describe("beforeClose", () => {
  it("runs hooks before the session stops, while commands still work", async () => {
    session = await createEnvironment({});
    const seen: string[] = [];
    session.beforeClose(async () => {
      seen.push((await session!.execute("echo still open")).output);
    });
    const removed = session.beforeClose(() => {
      seen.push("removed hook ran");
    });
    removed();
    session.beforeClose(() => {
      throw new Error("a failing hook does not stop close");
    });
    await session.close();
    expect(seen).toEqual(["still open\n"]);
    expect(session.closed).toBe(true);
    await session.close(); // idempotent
  });
});
