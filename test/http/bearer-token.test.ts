/** src/http/bearer-token.ts: which tokens a server accepts, and the comparison with what a request sends. */

import { describe, expect, it } from "vitest";
import { InvalidOptionError } from "../../src/core/errors.js";
import { checkTokenOption, MIN_TOKEN_LENGTH, TokenCheck, tokenProblem } from "../../src/http/bearer-token.js";

const TOKEN = "test-token-0123456789abcdef";

describe("TokenCheck", () => {
  const check = new TokenCheck(TOKEN);

  it("accepts exactly `Bearer <token>`, the scheme in any case", () => {
    expect(check.matches(`Bearer ${TOKEN}`)).toBe(true);
    expect(check.matches(`bearer ${TOKEN}`)).toBe(true);
    expect(check.matches(`Bearer  ${TOKEN} `)).toBe(true);
  });

  it("refuses anything else", () => {
    const refused = [
      undefined,
      "",
      "Bearer",
      "Bearer ",
      TOKEN,
      `Bearer ${TOKEN} extra`,
      `Token ${TOKEN}`,
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN.toUpperCase()}`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN}0`,
    ];
    for (const header of refused) expect(check.matches(header), String(header)).toBe(false);
  });
});

describe("which tokens are accepted", () => {
  it(`wants at least ${MIN_TOKEN_LENGTH} characters and no whitespace`, () => {
    expect(MIN_TOKEN_LENGTH).toBe(16);
    expect(tokenProblem("a".repeat(16))).toBeUndefined();
    expect(tokenProblem("a".repeat(15))).toMatch(/at least 16 characters.*got 15 characters/);
    expect(tokenProblem("abcdefgh ijklmnopq")).toMatch(/with whitespace/);
    expect(tokenProblem(1234567890123456)).toBe("must be a string, got a number");
  });

  it("names the option and the length, never the token", () => {
    expect(checkTokenOption("token", TOKEN)).toBe(TOKEN);
    let error: unknown;
    try {
      checkTokenOption("token", "hunter2 hunter2");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toMatchObject({
      option: "token",
      message: expect.stringMatching(/^token must be at least 16 characters/),
    });
    expect((error as Error).message).not.toContain("hunter2");
  });
});
