// MCP from a client: start `shellwright mcp` over stdio, list its tools, and call two of them.
// The session lives as long as the connection: `cd` and `export` in one call hold for the next.
// Run: node examples/mcp-client.ts
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

// The installed package's CLI (what `npx shellwright` runs), started with this Node.
const cli = fileURLToPath(new URL("./cli/main.js", import.meta.resolve("shellwright")));
const transport = new StdioClientTransport({ command: process.execPath, args: [cli, "mcp", "--cwd", "/tmp"] });
const client = new Client({ name: "example-client", version: "1.0.0" });
await client.connect(transport);
try {
  const { tools } = await client.listTools();
  console.log("tools:", tools.map((tool) => tool.name).join(", "));
  await client.callTool({ name: "terminal", arguments: { command: "export FROM_MCP=yes" } });
  const result = await client.callTool({ name: "terminal", arguments: { command: 'echo "$FROM_MCP in $PWD"' } });
  console.log("terminal:", JSON.stringify(result.structuredContent));
} finally {
  await client.close(); // the server closes the session and exits
}
