/**
 * `shellwright/deepagents`: Shellwright as a LangChain deepagents sandbox
 * (`deepagents`, an optional peer dependency; `import "shellwright"` never
 * loads it): `createDeepAgent({ backend: await ShellwrightSandbox.create(env) })`.
 */

export { ShellwrightSandbox } from "./sandbox.js";
export type { ShellwrightSandboxOptions } from "./sandbox.js";
