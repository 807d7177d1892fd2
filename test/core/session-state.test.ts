/** Session.execute({isolated: true}) under concurrency, and Session.beforeClose: what the tools rely on. */

import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../helpers/close-after-each.js";
import { createEnvironment, type Environment } from "../../src/index.js";

const keep = closeAfterEach((session: Environment) => session.close());

describe("isolated (what the tools' housekeeping relies on)", () => {
  it("finishing last does not undo a concurrent export", async () => {
    const session = keep(await createEnvironment({ cwd: "/" }));
    const slow = session.execute("sleep 0.5; export LOST=1", { isolated: true });
    await session.execute("export SET_MEANWHILE=yes");
    await slow;
    expect((await session.execute("echo $SET_MEANWHILE ${LOST:-unset}")).output).toBe("yes unset\n");
  });
});

describe("what persists between calls (docs/persistence.md)", () => {
  it("keeps plain variables, arrays, set -o options, umask and soft limits; not set -e, set -u or traps", async () => {
    const session = keep(await createEnvironment({ backend: "local", cwd: "/" }));
    const setup = await session.execute(
      `x=1; arr=(a "b c"); declare -A m=([k]=v); set -o pipefail -o noclobber -o noglob; umask 077; ulimit -S -n 512; trap 'echo trapped' USR1 INT; set -e -u`,
    );
    expect(setup.exitCode).toBe(0);
    const r = await session.execute(
      [
        'echo "$x|${arr[1]}|${m[k]}|$(umask)|$(ulimit -S -n)"',
        'f=$(mktemp); echo "pipefail:$(false | true; echo $?) noglob:$(echo /*) noclobber:$({ : > "$f"; } 2>/dev/null && echo overwrote || echo refused)"; rm -f "$f"',
        'echo "traps:[$(trap -p USR1 INT)]"',
        'echo "unset var:[$never_set]"; false; echo "after false"',
      ].join("\n"),
    );
    expect(r.output).toBe(
      [
        "1|b c|v|0077|512",
        "pipefail:1 noglob:/* noclobber:refused",
        "traps:[]",
        "unset var:[]",
        "after false",
        "",
      ].join("\n"),
    );
  });
});

describe("trap listings", () => {
  it("trap -p shows the user's traps, not the wrapper's EXIT epilogue nor POSIX-mode defaults", async () => {
    const session = keep(await createEnvironment({ backend: "local", cwd: "/" }));
    expect((await session.execute("trap -p")).output).toBe("");
    const r = await session.execute("trap 'echo bye' EXIT; trap 'echo u' USR1; trap -p; trap -p EXIT; echo body");
    expect(r.output).toBe("trap -- 'echo bye' EXIT\ntrap -- 'echo u' SIGUSR1\ntrap -- 'echo bye' EXIT\nbody\nbye\n");
    // The next call still commits its state: the epilogue was put back after the listing.
    await session.execute("trap -p >/dev/null; export AFTER_LISTING=1");
    expect((await session.execute("echo $AFTER_LISTING")).output).toBe("1\n");
  });
});

describe("beforeClose", () => {
  it("runs hooks before the session stops, while commands still work", async () => {
    const session = keep(await createEnvironment({}));
    const seen: string[] = [];
    session.beforeClose(async () => {
      seen.push((await session.execute("echo still open")).output);
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
