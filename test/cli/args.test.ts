/** The CLI's one argv parser (src/cli/args.ts), in-process: what a usage error says. */

import { describe, expect, it } from "vitest";
import { parseCommand, UsageError } from "../../src/cli/args.js";
import { exec } from "../../src/cli/specs.js";

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
