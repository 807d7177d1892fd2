/**
 * What ShellwrightSandbox promises beyond deepagents' standard tests, on a
 * local session: execute keeps the session's state and masks secrets, its own
 * reads never undo a `cd` that runs beside them, protected paths are refused,
 * an edit never overwrites a change it did not read, and a project without
 * deepagents reads what to install.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ShellwrightSandbox } from "../../src/deepagents/index.js";
import { DEEPAGENTS_INSTALL_HINT, loadDeepagents } from "../../src/deepagents/load-deepagents.js";
import { editFile } from "../../src/deepagents/files.js";
import { createEnvironment, InvalidOptionError, ShellwrightError, type Environment } from "../../src/index.js";
import { missingModule } from "../helpers/missing-module.js";

describe("ShellwrightSandbox", () => {
  let env: Environment;
  let sandbox: ShellwrightSandbox;
  let dir: string;

  beforeAll(async () => {
    env = await createEnvironment({
      backend: "local",
      cwd: "/tmp",
      env: { DEEP_API_KEY: "sk-deep-secret-0123456789" },
    });
    dir = (await env.execute("mktemp -d")).output.trim();
    sandbox = await ShellwrightSandbox.create(env, { initialFiles: { [`${dir}/seed.txt`]: "seeded" } });
  });
  afterAll(async () => {
    await env.execute(`rm -rf ${dir}`);
    await sandbox.close();
  });

  it("runs execute in the session: state carries over, secrets are masked", async () => {
    expect(sandbox.id).toBe(`shellwright-${env.id}`);
    expect(await sandbox.execute(`cd ${dir} && export STEP=one`)).toEqual({
      output: "",
      exitCode: 0,
      truncated: false,
    });
    expect(await sandbox.execute("echo $STEP $PWD; cat seed.txt; echo; echo $DEEP_API_KEY")).toEqual({
      output: `one ${dir}\nseeded\n[REDACTED]\n`,
      exitCode: 0,
      truncated: false,
    });
  });

  it("reads, lists and searches without undoing a cd that runs beside them", async () => {
    await sandbox.execute(`mkdir -p ${dir}/moved && cd ${dir}`);
    const reads = Array.from({ length: 8 }, () => sandbox.ls(dir));
    const moved = sandbox.execute(`cd ${dir}/moved`);
    const more = Array.from({ length: 8 }, () => sandbox.grep("seeded", dir));
    await Promise.all([...reads, moved, ...more]);
    // Had the reads run as plain calls, the last to finish would have put the session back in `dir`.
    expect((await sandbox.execute("pwd")).output).toBe(`${dir}/moved\n`);
  });

  it("refuses protected paths and reports the provider's error codes", async () => {
    expect(await sandbox.uploadFiles([["~/.ssh/authorized_keys", Buffer.from("x")]])).toEqual([
      { path: "~/.ssh/authorized_keys", error: "permission_denied" },
    ]);
    expect(await sandbox.uploadFiles([[dir, Buffer.from("x")]])).toEqual([{ path: dir, error: "is_directory" }]);
    expect(await sandbox.downloadFiles([dir, `${dir}/none`])).toEqual([
      { path: dir, content: null, error: "is_directory" },
      { path: `${dir}/none`, content: null, error: "file_not_found" },
    ]);
    expect((await sandbox.write(`${dir}/../${dir.split("/").pop()}/bytes.bin`, "x")).error).toBeUndefined();
  });

  it("never overwrites a change the edit did not read", async () => {
    const file = `${dir}/race.txt`;
    await env.execute(`printf 'alpha\\n' > ${file}`);
    // The file changes between the edit's read and its write: an environment whose next write finds it changed.
    let changed = false;
    const racing: Environment = Object.create(env, {
      execute: {
        value: async (command: string, options?: Parameters<Environment["execute"]>[1]) => {
          if (!changed && options?.stdin !== undefined) {
            changed = true;
            await env.execute(`printf 'someone else\\n' > ${file}`);
          }
          return env.execute(command, options);
        },
      },
    });
    expect(await editFile(racing, file, "alpha", "beta", false, {})).toEqual({
      error: expect.stringMatching(/^Error: '.*race\.txt' changed on disk since it was read; nothing was written/),
    });
    expect((await env.execute(`cat ${file}`)).output).toBe("someone else\n");
  });

  it("is not running until initialized when given a function, and refuses what it cannot use", async () => {
    const later = new ShellwrightSandbox(() => createEnvironment({ backend: "local" }));
    expect(later.isRunning).toBe(false);
    expect(() => later.session).toThrow(/has not been initialized/);
    await later.initialize();
    expect(later.isRunning).toBe(true);
    await later.close();
    expect(later.isRunning).toBe(false);
    // A start that failed is tried again by the next initialize(), not answered with the old failure.
    let opens = 0;
    const flaky = new ShellwrightSandbox(() => {
      opens += 1;
      return opens === 1 ? Promise.reject(new Error("backend not ready")) : Promise.resolve(env);
    });
    await expect(flaky.initialize()).rejects.toThrow("backend not ready");
    expect(flaky.isRunning).toBe(false);
    await flaky.initialize();
    expect([opens, flaky.isRunning]).toEqual([2, true]);
    expect(() => new ShellwrightSandbox("local" as never)).toThrow(InvalidOptionError);
    expect(() => new ShellwrightSandbox(env, { timeout: 5 } as never)).toThrow(
      /Unknown ShellwrightSandbox option "timeout"/,
    );
  });

  it("says what to install when deepagents is missing", () => {
    const missing = () => loadDeepagents(missingModule("deepagents"));
    expect(missing).toThrow(ShellwrightError);
    expect(missing).toThrow(DEEPAGENTS_INSTALL_HINT);
    expect(DEEPAGENTS_INSTALL_HINT).toContain("npm install deepagents@1");
  });
});
