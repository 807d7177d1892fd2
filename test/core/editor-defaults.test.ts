/**
 * The session's editor stand-in (src/core/editor-defaults.ts), on every
 * backend: `git commit` without `-m` returns with the advice instead of
 * waiting for a vi nobody can type into, and leaves nothing running.
 */

import { describe, expect, it } from "vitest";
import { EDITOR_ADVICE, EDITOR_STAND_IN } from "../../src/core/editor-defaults.js";
import { compatBackends } from "../compat/backends.js";
import { sessionWithGit } from "../helpers/git-session.js";

const create = sessionWithGit;

const GIT = "git -c user.name=t -c user.email=t@example.com";

for (const backend of compatBackends) {
  describe.skipIf(!backend.enabled)(`the editor stand-in: ${backend.name}`, () => {
    it("git commit without -m and git rebase -i fail at once with the advice, and leave no process", async () => {
      const session = await create(backend);
      try {
        const repo = (await session.execute("mktemp -d")).output.trim();
        await session.execute(`cd ${repo} && git init -q && ${GIT} commit -q --allow-empty -m one`);
        const commit = await session.execute(`${GIT} commit --allow-empty; echo "rc=$?"`);
        expect(commit.timedOut).toBe(false);
        expect(commit.output).toContain(EDITOR_ADVICE);
        expect(commit.output).toMatch(/rc=1\n$/);
        const rebase = await session.execute(`${GIT} rebase -i HEAD; echo "rc=$?"`);
        expect(rebase.timedOut).toBe(false);
        expect(rebase.output).toContain(EDITOR_ADVICE);
        expect(rebase.output).toMatch(/rc=1\n$/);
        // Whatever git or its editor started would have its cwd in the repository; this check runs from /.
        await session.execute("cd /");
        const left = await session.execute(
          `for p in /proc/[0-9]*; do readlink $p/cwd; done 2>/dev/null | grep -c ${repo}`,
        );
        expect(left.output).toBe("0\n");
        await session.execute(`rm -rf ${repo}`);
      } finally {
        await session.close();
      }
    }, 120_000);

    it.runIf(backend.name === "local" || backend.name === "ssh")(
      "an editor the user chose is kept (the unset ones stay unset); a terminal editor is not a choice that works here",
      async () => {
        const show = 'echo "${GIT_EDITOR-unset}|$EDITOR|${VISUAL-unset}|${NO_EDITOR_HELP-unset}"';
        const chosen = await create(backend, { EDITOR: "true" });
        try {
          expect((await chosen.execute(show)).output).toBe("unset|true|unset|unset\n");
        } finally {
          await chosen.close();
        }
        // npm sets EDITOR=vi for every script and npx run; a profile often sets EDITOR=vim.
        const vim = await create(backend, { EDITOR: "/usr/bin/vim -u NONE" });
        try {
          expect((await vim.execute(`${show}; [ "$EDITOR" = "$GIT_EDITOR" ] && echo same`)).output).toBe(
            `${EDITOR_STAND_IN}|${EDITOR_STAND_IN}|${EDITOR_STAND_IN}|${EDITOR_ADVICE}\nsame\n`,
          );
        } finally {
          await vim.close();
        }
      },
    );
  });
}
