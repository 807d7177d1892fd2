/** JSON syntax errors that say where the text breaks and never quote it (it may hold env values). */

import { describe, expect, it } from "vitest";
import { jsonSyntaxProblem } from "../../src/core/json-error.js";

const problem = (text: string): string => {
  try {
    JSON.parse(text);
  } catch (error) {
    return jsonSyntaxProblem(error, text);
  }
  throw new Error("parsed");
};

describe("jsonSyntaxProblem", () => {
  it.each([
    '{"env":{"K":"sk-live-abc"},}',
    '{"env":{"K":"sk-live-abc" "x"}}',
    '{"a":\n sk-live-abc}',
    '{"a":"sk-live-abc',
    '{"a":1}sk-live-abc',
    "sk-live-abc",
  ])("never quotes the text: %j", (text) => {
    const message = problem(text);
    expect(message).not.toMatch(/sk|live|abc/);
    expect(message.length).toBeGreaterThan(5);
  });

  it("gives the line and column when V8 gives a position", () => {
    expect(problem('{\n  "a": 1,\n}')).toMatch(/at line 3, column 1$/);
  });
});
