/** A project without the AI SDK reads one line saying what to install, not Node's bare module error. */

import { describe, expect, it } from "vitest";
import { AI_INSTALL_HINT, loadAi } from "../../src/ai/load-ai.js";
import { ShellwrightError } from "../../src/index.js";
import { failingRequire, missingModule } from "../helpers/missing-module.js";

describe("loadAi", () => {
  it("loads the installed AI SDK", () => {
    expect(typeof loadAi().jsonSchema).toBe("function");
  });

  it("says what to install when `ai` is missing", () => {
    const load = () => loadAi(missingModule("ai"));
    expect(load).toThrow(ShellwrightError);
    expect(load).toThrow(AI_INSTALL_HINT);
    expect(AI_INSTALL_HINT).not.toContain("\n");
    expect(AI_INSTALL_HINT).toContain("npm install ai@7");
  });

  it("passes on any other failure as it is", () => {
    expect(() => loadAi(failingRequire("MODULE_NOT_FOUND", "Cannot find module 'zod'"))).toThrow(
      "Cannot find module 'zod'",
    );
    expect(() => loadAi(failingRequire("ERR_REQUIRE_ASYNC_MODULE", "async"))).toThrow("async");
  });
});
