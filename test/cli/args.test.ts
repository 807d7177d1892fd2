/** The CLI's one argv parser (src/cli/args.ts), in-process: what a usage error says. */

import { describe, expect, it } from "vitest";
import { integerValue, parseCommand, positiveValue, UsageError } from "../../src/cli/args.js";
import { exec, serve } from "../../src/cli/specs.js";

function usageError(args: string[]): string {
  try {
    parseCommand(exec, args);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`parseCommand accepted ${JSON.stringify(args)}`);
}

describe("parseCommand's usage errors", () => {
  // Node's own message names "-t, --timeout" whichever was typed; the user looks for what they typed.
  const cases: [string[], string][] = [
    [["--timeout"], "--timeout needs a value"],
    [["-t"], "-t needs a value"],
    [["--session"], "--session needs a value"],
    [["-s"], "-s needs a value"],
    [["--json=yes", "true"], "--json takes no value"],
    [["--frobnicate", "true"], "unknown option --frobnicate"],
    [["-Z", "true"], "unknown option -Z"],
  ];
  for (const [args, message] of cases) {
    it(`${args.join(" ")}: ${message}`, () => {
      expect(usageError(args)).toBe(`${message}; usage: shellwright exec [options] [--] COMMAND…`);
    });
  }
});

describe("a flag's value", () => {
  it('a negative number after a short flag is its value as typed: `-t -5` is refused as -5, not "=-5"', () => {
    for (const args of [
      ["-t", "-5", "true"],
      ["--timeout", "-5", "true"],
    ]) {
      const { values, positionals } = parseCommand(exec, args);
      expect(values.timeout).toBe("-5");
      expect(positionals).toEqual(["true"]);
      expect(() => positiveValue(values, "timeout", "seconds")).toThrow(
        '--timeout must be a positive number of seconds, got "-5"',
      );
    }
  });

  it("a whole number out of range names the range: `serve --port 99999`", () => {
    const { values } = parseCommand(serve, ["--port", "99999"]);
    expect(() => integerValue(values, "port", 0, 65535)).toThrow(
      '--port needs a whole number from 0 to 65535, got "99999"',
    );
    expect(() => integerValue({ size: "0" }, "size", 1)).toThrow('--size needs a whole number of at least 1, got "0"');
  });
});
