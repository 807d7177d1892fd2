/** What a model reads of a terminal's output (src/tools/process/pty-terminal.ts). */

import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createEnvironment, processRegistry } from "../../../src/index.js";
import { shownPtyText } from "../../../src/tools/process/pty-terminal.js";
import { noStaticHelper } from "../../helpers/native-helper.js";

describe("shownPtyText", () => {
  it("turns every line end into \\n, the carriage return before or after the newline", () => {
    expect(shownPtyText("a\r\nb\n\rc\r\r\nd\n")).toBe("a\nb\nc\nd\n");
    // A lone return (a progress bar redrawing its line) is not a line end.
    expect(shownPtyText("10%\r50%\r\n")).toBe("10%\r50%\n");
  });

  it.skipIf(noStaticHelper !== undefined)(
    "an interactive bash's error after a typed line reads without \\r",
    async () => {
      const session = await createEnvironment({ backend: "local" });
      try {
        const registry = processRegistry(session);
        const shell = await registry.spawn("PS1='$ ' bash --norc --noprofile -i", { pty: { cols: 80, rows: 24 } });
        expect((await registry.waitFor(shell, /\$ $/, 20_000)).status).toBe("matched");
        registry.markAction(shell);
        await registry.write(shell, "print(6*7)\r");
        const answer = await registry.waitFor(shell, /syntax error[^]*\$ $/, 20_000);
        expect(answer.status).toBe("matched");
        expect(answer.output).toContain("print(6*7)\n");
        expect(answer.output).not.toContain("\r");
        await registry.kill(shell);
      } finally {
        await session.close();
      }
    },
  );
});

describe("the terminal emulator", () => {
  it.skipIf(noStaticHelper !== undefined)('is loaded with the first PTY, not by `import "shellwright"`', () => {
    const run = spawnSync(process.execPath, [join(import.meta.dirname, "../../fixtures/lazy-xterm.mjs")], {
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ before: false, after: true });
  });
});
