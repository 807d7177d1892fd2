/**
 * A fast-path call's stdin and script are files in the helper's directory
 * (issue 37.7: a `read -s` password was still there after its call had
 * returned, on a loaded machine). They must be gone before the call's
 * answer, and stay gone after a call stopped at its timeout. Real sessions on
 * local, docker and ssh; the job looks into its helper's directory itself
 * (`$__swl_d`, the launcher's name for it). It skips its own call's files
 * (`$__swl_id`): the helper removes them once it hears the job started, and a
 * job that looks at once, on a loaded machine, can still see its own script.
 */

import { describe, expect, it } from "vitest";
import { compatBackends } from "../../../compat/backends.js";
import { eventually } from "../../../helpers/processes.js";
import { noLocalHelper, noStaticHelper, skipUnless } from "../../../helpers/native-helper.js";

const PASSWORD = "hunter2-swordfish";
/** The helper's directory as the job sees it, and what in it holds the password. */
const LOOK = `ls "$__swl_d" | grep -E '\\.(i|c)$' | grep -v "^$__swl_id\\."; grep -rl -D skip --exclude="$__swl_id.*" ${PASSWORD} "$__swl_d" 2>/dev/null; echo looked`;

const cases = compatBackends.filter((b) => ["local", "docker", "ssh"].includes(b.name));

describe.each(cases)("a fast-path call's input files ($name)", (backend) => {
  it("are gone while the command runs, after it returns, and after a timeout", async (context) => {
    if (!backend.enabled) context.skip(`${backend.name} is not set up here`);
    skipUnless(context, backend.name === "local" ? noLocalHelper : noStaticHelper);
    const session = await backend.create({ timeoutMs: 20_000 });
    try {
      await eventually(
        async () => /^swmux/.test((await session.execute("cat /proc/$PPID/comm")).output),
        "the fast path",
      );
      // In a subshell: a variable holding it would be the session's state, saved like any other.
      const during = await session.execute(`(read -rs pw; echo got \${#pw}); ${LOOK}`, { stdin: `${PASSWORD}\n` });
      expect(during).toMatchObject({ exitCode: 0, output: `got ${PASSWORD.length}\nlooked\n` });
      expect((await session.execute(LOOK)).output).toBe("looked\n");
      const stopped = await session.execute("read -rs pw; sleep 30", { stdin: `${PASSWORD}\n`, timeoutMs: 1000 });
      expect(stopped.timedOut).toBe(true);
      expect((await session.execute(LOOK)).output).toBe("looked\n");
    } finally {
      await session.close();
    }
  });
});
