/** The tools' settings: defaults, and errors that name the option and the value. */

import { describe, expect, it } from "vitest";
import { toolSettings } from "../../../src/tools/shared/tool-settings.js";

describe("toolSettings", () => {
  it("fills in defaults", () => {
    const settings = toolSettings();
    expect(settings).toMatchObject({
      maxForegroundTimeoutSeconds: 600,
      inlineOutputChars: 50_000,
      resultThresholdChars: 100_000,
      previewChars: 1500,
      turnBudgetChars: 200_000,
      stuckInputMs: 3000,
    });
    expect(toolSettings({ stuckInputMs: 0 }).stuckInputMs).toBe(0);
    expect(settings.processes).toEqual({
      bufferChars: 200_000,
      maxProcesses: 64,
      finishedTtlMs: 1_800_000,
      killGraceMs: 2000,
      watchIntervalMs: 200,
      maxLogBytes: 4 * 1024 * 1024,
    });
  });

  it("names the option and the value it got", () => {
    expect(() => toolSettings({ inlineOutputChars: -1 })).toThrow(
      "inlineOutputChars must be a positive integer, got -1",
    );
    expect(() => toolSettings({ maxForegroundTimeoutSeconds: 0 })).toThrow(
      "maxForegroundTimeoutSeconds must be a positive number of seconds, got 0",
    );
    expect(() => toolSettings({ processes: { maxProcesses: 1.5 } })).toThrow(
      "processes.maxProcesses must be a positive integer, got 1.5",
    );
    for (const maxLogBytes of [65_535, 16_777_217, 1.5e6 + 0.5])
      expect(() => toolSettings({ processes: { maxLogBytes } })).toThrow(
        `processes.maxLogBytes must be a whole number of bytes from 65536 to 16777216 (16 MiB), got ${maxLogBytes}`,
      );
    expect(toolSettings({ processes: { maxLogBytes: 16_777_216 } }).processes.maxLogBytes).toBe(16_777_216);
    expect(() => toolSettings({ stuckInputMs: -1 })).toThrow(
      "stuckInputMs must be a number of milliseconds (0 turns the check off), got -1",
    );
    expect(() => toolSettings({ approve: "yes" } as never)).toThrow('approve must be a function, got "yes"');
    expect(() => toolSettings({ turnBudget: 5 } as never)).toThrow(/Unknown tool settings option "turnBudget"/);
    expect(() => toolSettings({ toolThresholdChars: { terminal: "big" } } as never)).toThrow(
      'toolThresholdChars.terminal must be a number of characters (0 or more), got "big"',
    );
  });
});
