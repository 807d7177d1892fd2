/**
 * CallCancel (an SDK call's kill when the tree kill could not reach it): by the call's mark, once its command has
 * started; the backend's last resort only when that kill cannot run.
 */

import { describe, expect, it, vi } from "vitest";
import { CallCancel } from "../../../src/backends/shared/call-cancel.js";

function cancelWith(markKills: boolean[]) {
  const killByMark = vi.fn(async () => markKills.shift() ?? true);
  const lastResort = vi.fn(async () => undefined);
  return { cancel: new CallCancel(killByMark, lastResort), killByMark, lastResort };
}

describe("CallCancel", () => {
  it("a call killed before its command starts never starts it", async () => {
    const { cancel, killByMark, lastResort } = cancelWith([]);
    expect(cancel.cancel()).toBeUndefined();
    expect(() => cancel.beforeStart()).toThrow(/killed before its command started/);
    expect(killByMark).not.toHaveBeenCalled();
    expect(lastResort).not.toHaveBeenCalled();
  });

  it("a kill that came while the command was starting goes once it has started, by its mark", async () => {
    const { cancel, killByMark, lastResort } = cancelWith([true]);
    cancel.beforeStart();
    void cancel.cancel();
    expect(killByMark).not.toHaveBeenCalled();
    await cancel.started();
    expect(killByMark).toHaveBeenCalledTimes(1);
    expect(lastResort).not.toHaveBeenCalled();
    cancel.ended();
  });

  it("sweeps once more a second later for a call that has not ended, not for one that has", async () => {
    vi.useFakeTimers();
    try {
      const running = cancelWith([true, true]);
      await running.cancel.started();
      await running.cancel.cancel();
      await vi.advanceTimersByTimeAsync(1500);
      expect(running.killByMark).toHaveBeenCalledTimes(2);

      const ended = cancelWith([true, true]);
      await ended.cancel.started();
      await ended.cancel.cancel();
      ended.cancel.ended();
      await vi.advanceTimersByTimeAsync(1500);
      expect(ended.killByMark).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("falls back to the last resort only when the kill by mark cannot run, and swallows its failure", async () => {
    const killByMark = vi.fn(async () => false);
    const lastResort = vi.fn(async () => {
      throw new Error("the sandbox cannot be stopped either");
    });
    const cancel = new CallCancel(killByMark, lastResort);
    await cancel.started();
    await expect(cancel.cancel()).resolves.toBeUndefined();
    expect(lastResort).toHaveBeenCalledTimes(1);
    // A second kill does nothing more.
    expect(cancel.cancel()).toBeUndefined();
    expect(killByMark).toHaveBeenCalledTimes(1);
  });

  it("gives up waiting for the end a minute after the kill", async () => {
    vi.useFakeTimers();
    try {
      const { cancel } = cancelWith([true, true]);
      await cancel.started();
      expect(cancel.givenUp).toBe(false);
      await cancel.cancel();
      await vi.advanceTimersByTimeAsync(59_000);
      expect(cancel.givenUp).toBe(false);
      await vi.advanceTimersByTimeAsync(2_000);
      expect(cancel.givenUp).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
