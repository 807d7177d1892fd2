/**
 * The common options' secret values: which env / forwardEnv values and which
 * `secrets` a session masks, and validation that never shows a value.
 */

import { afterEach, describe, expect, it } from "vitest";
import { secretValues, sessionOptions, withOutputCap } from "../../../src/backends/shared/config.js";
import { InvalidOptionError } from "../../../src/core/errors.js";

describe("secretValues", () => {
  afterEach(() => {
    delete process.env.SW_TEST_FORWARDED_TOKEN;
    delete process.env.SW_TEST_FORWARDED_PLAIN;
  });

  it("takes secret-looking env values, forwarded secret-looking variables' values now, and the secrets option", () => {
    process.env.SW_TEST_FORWARDED_TOKEN = "forwarded-token-value";
    process.env.SW_TEST_FORWARDED_PLAIN = "forwarded-plain-value";
    expect(
      secretValues({
        env: { GITHUB_TOKEN: "env-token-value", Db_Password: "pw-value", HOME: "/root" },
        forwardEnv: ["SW_TEST_FORWARDED_TOKEN", "SW_TEST_FORWARDED_PLAIN", "SW_TEST_UNSET_KEY"],
        secrets: ["listed-value", "env-token-value"],
      }).sort(),
    ).toEqual(["env-token-value", "forwarded-token-value", "listed-value", "pw-value"]);
  });

  it("rejects a bad secrets option by name and position, never by value", () => {
    for (const secrets of ["top-secret-value", [" ok-value ", ""], [{ value: "top-secret-value" }]]) {
      let error: unknown;
      try {
        secretValues({ secrets });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect((error as InvalidOptionError).option).toBe("secrets");
      expect((error as Error).message).not.toContain("top-secret");
    }
  });
});

describe("maxOutputBytes", () => {
  it("takes maxOutputChars, its old name (it always counted bytes), with a warning", () => {
    const warnings: string[] = [];
    const options = sessionOptions({ maxOutputChars: 1234, onWarning: (m) => warnings.push(m) }, "/tmp");
    expect(options.maxOutputBytes).toBe(1234);
    expect(warnings).toEqual([expect.stringMatching(/maxOutputChars is deprecated; use maxOutputBytes/)]);
  });

  it("refuses both spellings at once, and a bad value under the name the caller wrote", () => {
    expect(() => sessionOptions({ maxOutputBytes: 10, maxOutputChars: 10 }, "/tmp")).toThrow(
      /Pass maxOutputBytes or maxOutputChars, not both/,
    );
    expect(() => sessionOptions({ maxOutputChars: -1, onWarning: () => undefined }, "/tmp")).toThrow(
      expect.objectContaining({ option: "maxOutputChars" }) as Error,
    );
  });
});

describe("withOutputCap", () => {
  it("replaces either spelling of the cap, so a later choice never meets an earlier one as 'both'", () => {
    const capped = withOutputCap({ backend: "local", maxOutputChars: 1000 }, 500);
    expect(capped).toEqual({ backend: "local", maxOutputBytes: 500 });
    expect(sessionOptions(capped, "/tmp").maxOutputBytes).toBe(500);
    expect(withOutputCap({ maxOutputBytes: 7 }, undefined)).toEqual({ maxOutputBytes: 7 });
  });
});
