/**
 * Loads LangChain's deepagents (an optional peer dependency) when
 * `shellwright/deepagents` is imported, so that a project without it reads
 * what to install instead of Node's bare ERR_MODULE_NOT_FOUND (see
 * ai/load-ai.ts for why `require`).
 */

import { createRequire } from "node:module";
import type * as Deepagents from "deepagents";
import { ShellwrightError } from "../core/errors.js";

export type DeepagentsModule = typeof Deepagents;

export const DEEPAGENTS_INSTALL_HINT =
  "shellwright/deepagents needs LangChain's deepagents, which is not installed: run `npm install deepagents@1`";

export function loadDeepagents(require: (id: string) => unknown = createRequire(import.meta.url)): DeepagentsModule {
  try {
    return require("deepagents") as DeepagentsModule;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const missing =
      (code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND") &&
      /['"]deepagents['"]/.test(error instanceof Error ? error.message.split("\n")[0]! : "");
    if (!missing) throw error;
    throw new ShellwrightError("MISSING_DEPENDENCY", DEEPAGENTS_INSTALL_HINT, { cause: error });
  }
}
