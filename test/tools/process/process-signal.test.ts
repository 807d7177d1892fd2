/**
 * The checks of a program's process options (process-signal.ts) through spawn, on a real local session: each bad
 * input is refused before anything starts, by an error naming the option (and never a variable's value); a
 * variable's value reaches the process without being in any script the session ran.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, spawn, type Environment } from "../../../src/index.js";
import { processRegistry } from "../../../src/tools/process/process-registry.js";

let env: Environment;
beforeAll(async () => {
  env = await createEnvironment({ backend: "local", fastPath: false });
});
afterAll(async () => {
  await env.close();
});

describe("a program's process options", () => {
  it("refuses bad env names and values, naming the variable and never showing the value", async () => {
    for (const name of ["1ABC", "A-B", "", "UID", "SHELLWRIGHT_BG_ID", "__sw_in", "A B"])
      await expect(spawn(env, "true", { env: { [name]: "v" } })).rejects.toMatchObject({
        code: "INVALID_OPTION",
        option: `env.${name}`,
      });
    const secret = "hunter2-do-not-show";
    const error = await spawn(env, "true", { env: { OK: `${secret}\0` } }).catch((e: Error) => e);
    expect(error).toMatchObject({ code: "INVALID_OPTION", option: "env.OK" });
    expect((error as Error).message).not.toContain(secret);
    await expect(spawn(env, "true", { env: { N: 3 as unknown as string } })).rejects.toMatchObject({
      option: "env.N",
    });
    await expect(spawn(env, "true", { env: "A=1" as unknown as Record<string, string> })).rejects.toMatchObject({
      option: "env",
    });
  });

  it("refuses stream options that do not go together", async () => {
    const cases: [Parameters<typeof spawn>[2], string][] = [
      [{ separateStreams: true, pty: { rows: 24, cols: 80 } }, "separateStreams"],
      [{ onStdout: () => undefined }, "onStdout"],
      [{ onStderr: () => undefined, separateStreams: false }, "onStderr"],
      [{ separateStreams: true, onOutput: () => undefined }, "onOutput"],
      [{ separateStreams: "yes" as unknown as boolean }, "separateStreams"],
      [{ separateStreams: true, onStdout: "f" as unknown as () => void }, "onStdout"],
    ];
    for (const [options, option] of cases)
      await expect(spawn(env, "true", options)).rejects.toMatchObject({ code: "INVALID_OPTION", option });
    expect(processRegistry(env).all()).toEqual([]);
  });

  it("refuses a signal it does not send, naming it", async () => {
    const proc = await spawn(env, "sleep 300");
    await expect(proc.signal("SIGINT" as "SIGTERM")).rejects.toMatchObject({
      code: "INVALID_OPTION",
      option: "signal",
    });
    expect(proc.status).toBe("running");
    await proc.kill();
  });

  it("gives a variable's value to the process without putting it in any script the session runs", async () => {
    const secret = `s3cret-${Date.now()}`;
    const scripts: string[] = [];
    const execute = env.execute.bind(env);
    env.execute = (command, options) => (scripts.push(command), execute(command, options));
    try {
      const proc = await spawn(env, 'printf "%s" "$SW_SECRET"', { env: { SW_SECRET: secret } });
      expect((await proc.wait())?.output).toBe(secret);
    } finally {
      env.execute = execute;
    }
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) expect(script).not.toContain(secret);
  });
});
