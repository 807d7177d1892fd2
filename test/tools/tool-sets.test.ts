/** The tool sets by name, as `shellwright mcp --tools` reads them. */

import { describe, expect, it } from "vitest";
import { InvalidOptionError } from "../../src/index.js";
import { TOOLS } from "../../src/tools/registry.js";
import { toolSets } from "../../src/tools/tool-sets.js";

describe("toolSets", () => {
  it("gives each set's tools, in the order named, each tool once", () => {
    expect(toolSets("openai").map((t) => t.name)).toEqual(["shell", "apply_patch"]);
    expect(toolSets("anthropic, codex").map((t) => t.name)).toEqual([
      "bash",
      "str_replace_based_edit_tool",
      "exec_command",
      "write_stdin",
    ]);
    expect(toolSets("shellwright,shellwright")).toEqual(TOOLS);
  });

  it("refuses a set it does not know, naming it and the sets there are", () => {
    expect(() => toolSets("openai,gemini")).toThrow(
      new InvalidOptionError(
        "tools",
        'unknown tool set "gemini"; the sets are shellwright, openai, anthropic, codex, checkpoint (comma-separated for more than one)',
      ),
    );
    expect(() => toolSets("constructor")).toThrow(/unknown tool set "constructor"/);
  });
});
