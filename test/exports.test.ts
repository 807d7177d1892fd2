/**
 * The package's doors: `shellwright`, `shellwright/mcp`, `shellwright/ai`,
 * `shellwright/openai-agents` and `shellwright/deepagents` resolve through
 * package.json exports, and the main entry never loads the MCP SDK or an
 * optional peer (`ai`, `@openai/agents`, `deepagents`).
 */

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url).pathname;

/** Every bare package a compiled module imports or requires, following its relative imports. */
function packagesImportedBy(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, "utf8");
    for (const match of source.matchAll(
      /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s*["']([^"']+)["']|\brequire\(\s*["']([^"']+)["']\s*\)/g,
    )) {
      const specifier = match[1] ?? match[2] ?? match[3] ?? match[4]!;
      if (specifier.startsWith(".")) visit(resolve(dirname(file), specifier));
      else if (!specifier.startsWith("node:"))
        packages.add(specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!);
    }
  };
  visit(resolve(root, entry));
  return packages;
}

describe("package exports", () => {
  it("keeps the main entry free of the MCP SDK and the ai package", () => {
    const imported = packagesImportedBy("dist/index.js");
    expect(imported.has("zod")).toBe(true);
    expect(imported.has("ai")).toBe(false);
    expect(imported.has("@modelcontextprotocol/sdk")).toBe(false);
    expect(imported.has("@openai/agents")).toBe(false);
    expect(imported.has("deepagents")).toBe(false);
  });

  it("loads @openai/agents only from shellwright/openai-agents, and deepagents only from shellwright/deepagents", () => {
    expect(packagesImportedBy("dist/openai-agents/index.js").has("@openai/agents")).toBe(true);
    expect(packagesImportedBy("dist/openai-agents/index.js").has("deepagents")).toBe(false);
    expect(packagesImportedBy("dist/deepagents/index.js").has("deepagents")).toBe(true);
    expect(packagesImportedBy("dist/deepagents/index.js").has("@openai/agents")).toBe(false);
    expect(packagesImportedBy("dist/mcp/index.js").has("deepagents")).toBe(false);
  });

  it("loads the MCP SDK only from shellwright/mcp, and ai only from shellwright/ai", () => {
    expect(packagesImportedBy("dist/mcp/index.js").has("@modelcontextprotocol/sdk")).toBe(true);
    expect(packagesImportedBy("dist/mcp/index.js").has("ai")).toBe(false);
    expect(packagesImportedBy("dist/ai/index.js").has("ai")).toBe(true);
  });

  it("resolves each subpath by its package name", () => {
    const script = `
      const main = await import("shellwright");
      const mcp = await import("shellwright/mcp");
      const ai = await import("shellwright/ai");
      const agents = await import("shellwright/openai-agents");
      const deep = await import("shellwright/deepagents");
      console.log(JSON.stringify([typeof main.toolDefinitions, typeof main.handleToolCall, typeof mcp.createMcpServer, typeof mcp.serveStdio, typeof ai.createSandboxSession, typeof ai.shellwrightTools, typeof agents.ShellwrightShell, typeof agents.ShellwrightEditor, typeof agents.shellwrightAgentTools, typeof deep.ShellwrightSandbox]));
    `;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" });
    expect(JSON.parse(out)).toEqual(Array(10).fill("function"));
  });
});
