/**
 * `exec --env NAME=VALUE` and `--image` (src/cli/env-flag.ts, src/cli/exec.ts)
 * through the real CLI: the value reaches the command, never a command line
 * inside the backend, never a message; `--image` alone means docker.
 */

import { afterAll, describe, expect, it } from "vitest";
import { exportCall } from "../../src/cli/env-flag.js";
import { cli, cliHome } from "../helpers/cli.js";
import { DOCKER_TEST_IMAGE as IMAGE } from "../helpers/docker-test.js";

const home = cliHome();
afterAll(() => home.remove());

describe("exec --env", () => {
  it("exports each variable for the command; NAME alone takes this process's value; stdin stays the command's", () => {
    const env = { ...home.env, FROM_HERE: "here value" };
    const run = cli(
      { ...home, env },
      [
        "exec",
        "-e",
        "A=one two",
        "--env",
        "B=multi\nline=x",
        "-e",
        "FROM_HERE",
        "--",
        "sh",
        "-c",
        'read -r first; printf "%s|%s|%s|%s\\n" "$A" "$B" "$FROM_HERE" "$first"',
      ],
      { input: "piped line\n" },
    );
    expect(run).toMatchObject({ code: 0, stdout: "one two|multi\nline=x|here value|piped line\n", stderr: "" });
  });

  it("in a named session, is an export: it holds for the next exec of that session", () => {
    expect(cli(home, ["exec", "-s", "envs", "-e", "KEPT=yes", "true"]).code).toBe(0);
    expect(cli(home, ["exec", "-s", "envs", "echo $KEPT"])).toMatchObject({ code: 0, stdout: "yes\n" });
    expect(cli(home, ["close", "envs"]).code).toBe(0);
  });

  it("never puts a value on a command line: the call that sets it carries it on stdin", () => {
    const { script, stdin } = exportCall({ TOKEN: "s3cret-value" });
    expect(script).not.toContain("s3cret");
    expect(stdin).toBe("TOKEN=s3cret-value\0");
  });

  it("never quotes a value in an error", () => {
    for (const [args, message] of [
      [
        ["-e", "not-a-name-s3cret", "true"],
        "--env needs NAME=VALUE or the NAME of a variable set here; got a word that is neither (not shown: it may be a value)",
      ],
      [["-e", "bad name=s3cret", "true"], '--env needs NAME=VALUE; "bad name" is not a variable name'],
      [["-e", "UNSET_HERE_X", "true"], "--env UNSET_HERE_X: UNSET_HERE_X is not set in this environment"],
      [["-e", "UID=s3cret", "true"], "--env: UID: readonly variable"],
    ] as const) {
      const run = cli(home, ["exec", ...args]);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(`shellwright: ${message}\n`);
      expect(run.stderr).not.toContain("s3cret");
    }
  });

  it.skipIf(process.env.SHELLWRIGHT_TEST_DOCKER !== "1")(
    "--image alone is a docker session; no process in the container has the value on its command line",
    () => {
      const run = cli(home, [
        "exec",
        "--image",
        IMAGE,
        "-e",
        "SECRET_X=val-4711",
        "--",
        "sh",
        "-c",
        // The pattern is not the value, so this command's own line does not match it.
        'echo "$SECRET_X"; grep -l "val-471[1]" /proc/[0-9]*/cmdline 2>/dev/null || echo none',
      ]);
      expect(run).toMatchObject({ code: 0, stdout: "val-4711\nnone\n" });
    },
  );

  it("--image on a backend without images is refused, naming the ones with", () => {
    expect(cli(home, ["exec", "--image", "debian", "-b", "ssh", "true"])).toMatchObject({
      code: 2,
      stderr: "shellwright: --image is for the docker, apptainer, modal and daytona backends, not ssh\n",
    });
  });
});
