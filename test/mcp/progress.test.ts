/** The progress throttle, on fake timers (deterministic: no real time is measured). */

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ProgressReporter, type ProgressUpdate } from "../../src/mcp/progress.js";

describe("ProgressReporter", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("sends the first update at once, then at most one per interval, never losing the last line", () => {
    const sent: ProgressUpdate[] = [];
    const reporter = new ProgressReporter((update) => sent.push(update), 100);
    reporter.report("one\n");
    expect(sent).toEqual([{ progress: 4, message: "one" }]);
    reporter.report("two\n");
    reporter.report("three\n\n");
    expect(sent).toHaveLength(1);
    vi.advanceTimersByTime(100);
    expect(sent).toEqual([
      { progress: 4, message: "one" },
      { progress: 15, message: "three" },
    ]);
    vi.advanceTimersByTime(1000);
    expect(sent).toHaveLength(2);
  });

  it("keeps the message short and sends nothing after stop", () => {
    const sent: ProgressUpdate[] = [];
    const reporter = new ProgressReporter((update) => sent.push(update), 100);
    reporter.report(`${"x".repeat(300)}\n`);
    expect(sent[0]!.message).toBe(`${"x".repeat(200)}…`);
    reporter.report("late\n");
    reporter.stop();
    vi.advanceTimersByTime(1000);
    reporter.report("later\n");
    expect(sent).toHaveLength(1);
  });
});
