/** collectCall with stdout and stderr apart on a transport that cannot keep them apart. */

import { describe, expect, it } from "vitest";
import { collectCall } from "../../src/core/collect-call.js";
import { UnsupportedError } from "../../src/core/errors.js";
import { MarkerScanner } from "../../src/core/marker.js";
import type { ProcessHandle, Transport } from "../../src/core/transport.js";

describe("collectCall", () => {
  it("answers separateStreams on a handle without a stderr with an UnsupportedError naming the backend, and stops the call", async () => {
    let killed = false;
    const handle: ProcessHandle = {
      output: (async function* () {})(),
      wait: () => new Promise<number>(() => undefined),
      kill: () => {
        killed = true;
      },
    };
    const transport = { name: "custom" } as Transport;
    const secret = "00112233445566778899aabbccddeeff";
    const call = collectCall(
      transport,
      handle,
      { maxOutputBytes: 1000, outputHeadFraction: 0.4, killGraceMs: 100 },
      { timeoutMs: 60_000, separateStreams: true },
      new AbortController().signal,
      new MarkerScanner(secret),
      new MarkerScanner(secret),
    );
    await expect(call).rejects.toThrow(UnsupportedError);
    await expect(call).rejects.toThrow("The custom backend cannot keep stderr apart from stdout");
    expect(killed).toBe(true);
  });
});
