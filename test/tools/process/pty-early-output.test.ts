/**
 * What a PTY program prints before spawn() has returned (src/tools/process/pty-terminal.ts, output-stream.ts). On
 * the plain path the output arrives through a follower command whose first output is its start mark; on a loaded
 * machine Node reads the mark and the program's first line in one piece, so that line is fed to the terminal
 * before spawn() resolves. wait with a pattern sees it (it is output since the start); an action marked after
 * spawn() has dropped it, as an action must: wait looks at what arrives after the action.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../../src/index.js";
import { processRegistry } from "../../../src/tools/process/process-registry.js";
import { skipAllUnless, noStaticHelper } from "../../helpers/native-helper.js";
import { alive } from "../../helpers/processes.js";

/** The program: its pid on its first line, then it waits to be killed. */
const PROGRAM = 'echo "READY $$"; exec sleep 600';
const READY = /READY (\d+)/;

/**
 * The session, with each long-lived call's output (the follower's) held until it matches `until` and then given
 * in one piece, the start mark and the program's line together: what a machine too busy to read between them does.
 */
function readingLate(session: Environment, until: RegExp): Environment {
  const execute: Environment["execute"] = (command, options) => {
    const onOutput = options?.onOutput;
    if (options?.longLived !== true || onOutput === undefined) return session.execute(command, options);
    let held: string | undefined = "";
    return session.execute(command, {
      ...options,
      onOutput: (text) => {
        if (held === undefined) return onOutput(text);
        held += text;
        if (!until.test(held)) return;
        const all = held;
        held = undefined;
        onOutput(all);
      },
    });
  };
  return new Proxy(session, {
    get: (target, key) => {
      if (key === "execute") return execute;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe("a PTY program's first output, read together with the follower's start", () => {
  skipAllUnless(noStaticHelper);
  let real: Environment;
  let session: Environment;

  beforeAll(async () => {
    real = await createEnvironment({ backend: "local", fastPath: false });
    session = readingLate(real, READY);
  });
  afterAll(async () => {
    await real?.close();
  });

  it("is what wait with a pattern finds, when nothing was marked since the start", async () => {
    const registry = processRegistry(session);
    const program = await registry.spawn(PROGRAM, { pty: { cols: 80, rows: 24 } });
    const seen = await registry.waitFor(program, READY, 30_000);
    expect(seen.status, seen.output).toBe("matched");
    const pid = Number(READY.exec(seen.output)![1]);
    expect(alive(pid)).toBe(true);
    await registry.kill(program);
    expect(alive(pid)).toBe(false);
  });

  it("is dropped by an action marked after spawn(): it came before the action (it is on the screen)", async () => {
    const registry = processRegistry(session);
    const program = await registry.spawn(PROGRAM, { pty: { cols: 80, rows: 24 } });
    // The line was fed while spawn() had not returned yet: it is on the screen already.
    const screen = (await registry.screen(program)).screen;
    const pid = Number(READY.exec(screen)?.[1]);
    registry.markAction(program);
    // Nothing more comes (the program sleeps): the wait ends at its timeout with nothing since the action.
    expect(await registry.waitFor(program, READY, 1_000)).toEqual({ status: "timeout", output: "" });
    expect(alive(pid)).toBe(true);
    await registry.kill(program);
    expect(alive(pid)).toBe(false);
  });
});
