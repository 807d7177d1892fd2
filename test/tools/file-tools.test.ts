import { describe, expect, it } from "vitest";
import { fileTools } from "../../src/tools/files/file-tools.js";
import { inputJsonSchema } from "../../src/tools/shared/tool-definition.js";

describe("fileTools", () => {
  it("lists the five tools of part 2", () => {
    expect(fileTools.map((tool) => tool.name)).toEqual(["read_file", "write_file", "patch", "search_files", "execute_code"]);
  });

  it("exports JSON Schemas that models see (snapshot: review prompt changes)", () => {
    const schemas = Object.fromEntries(fileTools.map((tool) => [tool.name, { description: tool.description, input: inputJsonSchema(tool) }]));
    expect(schemas).toMatchSnapshot();
    expect((schemas.read_file!.input as { required: string[] }).required).toContain("path");
    expect((schemas.execute_code!.input as { required: string[] }).required).toEqual(["code"]);
  });
});
