/**
 * A pseudo-terminal's size at the entries (src/tools/process/pty-size.ts):
 * the library's spawn, resize and foreground command, and the tools' cols
 * and rows, refuse a size out of bounds with an error naming the field and
 * the value, before anything runs; the smallest size allowed is one the
 * program and the emulator agree on.
 */

import { describe, expect, it } from "vitest";
import { createEnvironment, processRegistry } from "../../../src/index.js";
import { callTool } from "../../../src/tools/registry.js";
import { noStaticHelper, skipAllUnless } from "../../helpers/native-helper.js";
import { useSession } from "../../helpers/session.js";

describe("pty sizes at the entries", () => {
  skipAllUnless(noStaticHelper);
  const local = useSession(() => createEnvironment({ backend: "local" }));

  it("spawn and the foreground command refuse a size out of bounds, naming the field and the value", async () => {
    const registry = processRegistry(local.session);
    await expect(registry.spawn("true", { pty: { cols: 1, rows: 24 } })).rejects.toThrow(
      "pty.cols must be a whole number from 2 to 1000, got 1",
    );
    await expect(registry.spawn("true", { pty: { cols: 80, rows: 1.5 } })).rejects.toThrow(
      "pty.rows must be a whole number from 1 to 1000, got 1.5",
    );
    await expect(registry.foregroundPtyCommand("true", { cols: 80, rows: 100_000 })).rejects.toMatchObject({
      code: "INVALID_OPTION",
      option: "pty.rows",
    });
    expect(registry.all()).toHaveLength(0);
  });

  it("resize refuses 100000×100000 and -3 at once, and takes 2×1, which the program and the screen agree on", async () => {
    const registry = processRegistry(local.session);
    const shell = await registry.spawn("PS1='$ ' exec bash --norc -i", { pty: { cols: 80, rows: 24 } });
    try {
      await expect(registry.resize(shell, { cols: 100_000, rows: 100_000 })).rejects.toThrow(
        "size.cols must be a whole number from 2 to 1000, got 100000",
      );
      await expect(registry.resize(shell, { cols: -3, rows: 10 })).rejects.toThrow("got -3");
      expect((await registry.screen(shell)).cols).toBe(80);
      expect(await registry.resize(shell, { cols: 2, rows: 1 })).toBe(true);
      registry.markAction(shell);
      await registry.write(shell, "stty size\r");
      expect((await registry.waitFor(shell, /^1 2/m, 30_000)).status).toBe("matched");
      const shot = await registry.screen(shell);
      expect([shot.cols, shot.rows]).toEqual([2, 1]);
    } finally {
      await registry.kill(shell);
    }
  });

  it("the tools refuse cols and rows out of bounds with the field, the bound and the value", async () => {
    const started = await callTool(
      "terminal",
      { command: "cat", background: true, pty: true },
      { session: local.session },
    );
    const id = started.session_id as string;
    const resized = await callTool(
      "process",
      { action: "resize", session_id: id, cols: -3, rows: 10 },
      { session: local.session },
    );
    expect(resized.error).toMatch(/^Invalid arguments for process: cols must be at least 2, got -3;/);
    const big = await callTool(
      "process",
      { action: "resize", session_id: id, cols: 80, rows: 1001 },
      { session: local.session },
    );
    expect(big.error).toMatch(/rows must be at most 1000, got 1001;/);
    const narrow = await callTool("terminal", { command: "true", pty: true, cols: 1 }, { session: local.session });
    expect(narrow.error).toMatch(/cols must be at least 2, got 1;/);
    await callTool("process", { action: "kill", session_id: id }, { session: local.session });
  });
});
