/** `shellwright/mcp`: the MCP server (loads the MCP SDK; `import "shellwright"` does not). */

export { createMcpServer, toCallToolResult } from "./server.js";
export type { McpServerOptions, ShellwrightMcpServer } from "./server.js";
export { serveStdio } from "./stdio.js";
export type { StdioOptions } from "./stdio.js";
export { StdioTransport } from "./stdio-transport.js";
export type { StdioTransportOptions } from "./stdio-transport.js";
export { serveHttp } from "./http.js";
export type { HttpMcpServer, HttpServeOptions } from "./http.js";
