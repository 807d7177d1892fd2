/** Session.execute({isolated: true}) under concurrency, and Session.beforeClose: what the tools rely on. */

import { afterEach, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../src/index.js";

let session: Environment | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

describe("isolated (what the tools' housekeeping relies on)", () => {
  it("finishing last does not undo a concurrent export", async () => {
    session = await createEnvironment({ cwd: "/" });
    const slow = session.execute("sleep 0.5; export LOST=1", { isolated: true });
    await session.execute("export SET_MEANWHILE=yes");
    await slow;
    expect((await session.execute("echo $SET_MEANWHILE ${LOST:-unset}")).output).toBe("yes unset\n");
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
