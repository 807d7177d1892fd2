/** A project without the AI SDK reads one line saying what to install, not Node's bare module error. */

import { describe, expect, it } from "vitest";
import { AI_INSTALL_HINT, loadAi } from "../../src/ai/load-ai.js";
import { ShellwrightError } from "../../src/index.js";

function failing(code: string, message: string): (id: string) => never {
  return () => {
    throw Object.assign(new Error(message), { code });
  };
}

describe("loadAi", () => {
  it("loads the installed AI SDK", () => {
    expect(typeof loadAi().jsonSchema).toBe("function");
  });

  it("says what to install when `ai` is missing", () => {
    const load = () => loadAi(failing("MODULE_NOT_FOUND", "Cannot find module 'ai'\nRequire stack:\n- x.js"));
    expect(load).toThrow(ShellwrightError);
    expect(load).toThrow(AI_INSTALL_HINT);
    expect(AI_INSTALL_HINT).not.toContain("\n");
    expect(AI_INSTALL_HINT).toContain("npm install ai@7");
  });

  it("passes on any other failure as it is", () => {
    expect(() => loadAi(failing("MODULE_NOT_FOUND", "Cannot find module 'zod'"))).toThrow("Cannot find module 'zod'");
    expect(() => loadAi(failing("ERR_REQUIRE_ASYNC_MODULE", "async"))).toThrow("async");
  });
});
