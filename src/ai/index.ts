/**
 * `shellwright/ai`: Shellwright for the Vercel AI SDK (`ai` 7, an optional
 * peer dependency; `import "shellwright"` never loads it).
 */

export { createSandboxSession } from "./sandbox.js";
export type { SandboxAdapterOptions } from "./sandbox.js";
export { shellwrightTools } from "./tools.js";
export type { ShellwrightToolsOptions } from "./tools.js";
