/** The one registry: which tools there are, finding one, and calling one by definition or by name. */

import { z } from "zod";
import { describe, expect, it } from "vitest";
import * as api from "../../src/index.js";
import type { Environment } from "../../src/index.js";
import { callTool, executeCodeTool, findTool, TOOLS, unknownToolMessage } from "../../src/tools/registry.js";
import { defineTool } from "../../src/tools/shared/tool-definition.js";

// Small results never reach the session (nothing is persisted), so these calls need none.
const context = { session: {} as Environment };
const echo = defineTool({
  name: "echo",
  description: "Returns its text.",
  inputSchema: z.object({ text: z.string() }),
  handler: ({ text }) => Promise.resolve({ text }),
});

describe("registry", () => {
  it("lists the tools in the order models see them, with one execute_code", () => {
    expect(TOOLS.map((tool) => tool.name)).toEqual([
      "terminal",
      "process",
      "read_file",
      "write_file",
      "patch",
      "search_files",
      "execute_code",
    ]);
    expect(findTool("execute_code")).toBe(executeCodeTool);
    expect(executeCodeTool.description).toContain("(terminal, read_file, write_file, patch, search_files)");
    expect(Object.isFrozen(TOOLS)).toBe(true);
  });

  it("finds a tool by name, in TOOLS or in the caller's list", () => {
    expect(findTool("terminal")?.name).toBe("terminal");
    expect(findTool("echo")).toBeUndefined();
    expect(findTool("echo", [echo])).toBe(echo);
    expect(findTool("terminal", [echo])).toBeUndefined();
  });

  it("calls a definition or the name of a tool in TOOLS, never throwing", async () => {
    expect(await callTool(echo, { text: "hi" }, context)).toEqual({ text: "hi" });
    expect(await callTool(echo, { text: 1 }, context)).toEqual({
      error: expect.stringMatching(
        /^Invalid arguments for echo: text must be a string, not a number; fix it and call echo again\.$/,
      ) as unknown,
    });
    expect(await callTool("echo", { text: "hi" }, context)).toEqual({
      error:
        'Unknown tool "echo". Available tools: terminal, process, read_file, write_file, patch, search_files, execute_code.',
    });
  });

  it("says which tools there are when one is missing", () => {
    expect(unknownToolMessage("nope", [echo])).toBe('Unknown tool "nope". Available tools: echo.');
    expect(unknownToolMessage(42, [])).toBe("Unknown tool 42. Available tools: none.");
  });

  it("is what the package exports", () => {
    expect(api.TOOLS).toBe(TOOLS);
    expect(api.findTool).toBe(findTool);
    expect(api.callTool).toBe(callTool);
  });
});
