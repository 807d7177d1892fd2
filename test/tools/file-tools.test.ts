/**
 * What the model sees of the file tools, and of an execute_code whose scripts
 * can call only them (built with createExecuteCodeTool, as a caller would; the
 * registry's execute_code, which adds the terminal, is pinned in units.test.ts).
 */

import { describe, expect, it } from "vitest";
import { createExecuteCodeTool } from "../../src/tools/execute-code/execute-code-tool.js";
import { readFileTool } from "../../src/tools/files/read-file.js";
import { searchFilesTool } from "../../src/tools/files/search-files.js";
import { writeFileTool } from "../../src/tools/files/write-file.js";
import { patchTool } from "../../src/tools/patch/patch-tool.js";
import { inputJsonSchema, type ToolDefinition } from "../../src/tools/shared/tool-definition.js";
import { TOOL_NAMES } from "../helpers/tools.js";

const fileOperationTools = [readFileTool, writeFileTool, patchTool, searchFilesTool] as ToolDefinition[];
const fileTools = [...fileOperationTools, createExecuteCodeTool({ tools: fileOperationTools }) as ToolDefinition];

describe("fileTools", () => {
  it("lists the registry's tools but the terminal and process ones, in its order", () => {
    expect(fileTools.map((tool) => tool.name)).toEqual(
      TOOL_NAMES.filter((name) => name !== "terminal" && name !== "process"),
    );
  });

  it("exports JSON Schemas that models see (snapshot: review prompt changes)", () => {
    const schemas = Object.fromEntries(
      fileTools.map((tool) => [tool.name, { description: tool.description, input: inputJsonSchema(tool) }]),
    );
    expect(schemas).toMatchSnapshot();
    expect((schemas.read_file!.input as { required: string[] }).required).toContain("path");
    expect((schemas.execute_code!.input as { required: string[] }).required).toEqual(["code"]);
  });
});
