/** The gateway's token masked in a result and in a stream, wherever the chunks are cut. */

import { describe, expect, it } from "vitest";
import { REDACTED } from "../../src/core/redact.js";
import { TokenMask } from "../../src/gateway/token-mask.js";

const TOKEN = "gw-0123456789abcdef0123456789abcdef";

describe("TokenMask", () => {
  const mask = new TokenMask(TOKEN);

  it("masks every occurrence and leaves other text alone", () => {
    expect(mask.mask(`a ${TOKEN} b ${TOKEN}\n`)).toBe(`a ${REDACTED} b ${REDACTED}\n`);
    expect(mask.mask("gw-0123 plain")).toBe("gw-0123 plain");
  });

  it("masks the token in a stream whatever the cuts", () => {
    const text = `before ${TOKEN} middle ${TOKEN}after\n`;
    for (let a = 0; a <= text.length; a++) {
      for (const b of [a, Math.min(text.length, a + 7), text.length]) {
        const stream = mask.stream();
        const shown = [text.slice(0, a), text.slice(a, b), text.slice(b)].map((c) => stream.push(c)).join("");
        expect(shown + stream.end()).toBe(`before ${REDACTED} middle ${REDACTED}after\n`);
      }
    }
  });

  it("holds back only a possible start of the token", () => {
    const stream = mask.stream();
    expect(stream.push("plain text ")).toBe("plain text ");
    expect(stream.push("x gw-01")).toBe("x ");
    expect(stream.push("9 no")).toBe("gw-019 no");
  });

  it("masks bytes cut anywhere, and keeps bytes that are not UTF-8 as they were", () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xc3]), Buffer.from(TOKEN), Buffer.from([0x80, 0])]);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const stream = mask.byteStream();
      const shown = Buffer.concat([
        stream.push(bytes.subarray(0, cut)),
        stream.push(bytes.subarray(cut)),
        stream.end(),
      ]);
      expect([...shown]).toEqual([0xff, 0xc3, ...Buffer.from(REDACTED), 0x80, 0]);
    }
  });
});
