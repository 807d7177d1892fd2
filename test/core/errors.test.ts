/** Every error Shellwright throws belongs to one hierarchy, recognisable by isShellwrightError. */

import { describe, expect, it } from "vitest";
import { isShellwrightError, ProcessError, ShellwrightError } from "../../src/index.js";

describe("ProcessError", () => {
  it("is a ShellwrightError with its own code and name", () => {
    const error = new ProcessError("Too many background processes");
    expect(isShellwrightError(error)).toBe(true);
    expect(error).toBeInstanceOf(ShellwrightError);
    expect(error).toMatchObject({
      code: "PROCESS_FAILED",
      name: "ProcessError",
      message: "Too many background processes",
    });
  });
});
