/**
 * docs/tools.md's "Tool schemas" section is the tools' real input schemas,
 * every field of every tool (the default tools, then the optional
 * exec_command / write_stdin pair), so the two cannot drift apart. After a
 * schema changes, `UPDATE_TOOL_DOCS=1 npx vitest run test/tools/tool-schemas-doc.test.ts`
 * rewrites the section.
 */

import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TOOLS } from "../../src/tools/registry.js";
import { inputJsonSchema } from "../../src/tools/shared/tool-definition.js";
import { UNIFIED_EXEC_TOOLS } from "../../src/tools/unified-exec/unified-exec.js";

const doc = new URL("../../docs/tools.md", import.meta.url);
const HEADING = "## Tool schemas\n";

/** The section as the schemas make it. */
function section(): string {
  const blocks = [...TOOLS, ...UNIFIED_EXEC_TOOLS].map(
    (tool) => `### \`${tool.name}\`\n\n\`\`\`json\n${JSON.stringify(inputJsonSchema(tool), null, 2)}\n\`\`\`\n`,
  );
  return [
    HEADING,
    "The input schema of every tool, as `toolSchemas()` gives it to a model (JSON Schema): the default tools,",
    "then the optional `exec_command` and `write_stdin` pair. This section is generated from the tools'",
    "definitions and checked against them by the test suite.\n",
    ...blocks,
  ].join("\n");
}

describe("docs/tools.md", () => {
  it("documents every field of every tool exactly as the tools' schemas have it", () => {
    const text = readFileSync(doc, "utf8");
    const at = text.indexOf(HEADING);
    expect(at, "docs/tools.md has no '## Tool schemas' section").toBeGreaterThan(0);
    const expected = section();
    if (process.env.UPDATE_TOOL_DOCS === "1") writeFileSync(doc, text.slice(0, at) + expected);
    else
      expect(
        text.slice(at),
        "docs/tools.md's schemas differ from the tools': UPDATE_TOOL_DOCS=1 npx vitest run test/tools/tool-schemas-doc.test.ts",
      ).toBe(expected);
  });

  it("names each tool's fields in its section, terminal's and process's terminal fields among them", () => {
    const text = readFileSync(doc, "utf8").slice(readFileSync(doc, "utf8").indexOf(HEADING));
    for (const field of ["pty", "cols", "rows", "keys", "pattern"]) expect(text).toContain(`"${field}": {`);
    for (const action of ["keys", "screen", "resize"]) expect(text).toContain(`"${action}"`);
  });
});
