/**
 * Loads the AI SDK (`ai`, an optional peer dependency) when `shellwright/ai`
 * is imported, so that a project without it reads what to install instead of
 * Node's bare ERR_MODULE_NOT_FOUND. `require` (not `import`) because a static
 * import cannot be caught and a top-level await would stop `require("shellwright/ai")`
 * from working; `ai` is ESM-only, so this is the very module an application's
 * own `import "ai"` gets (Node ≥ 20.19 requires ES modules).
 */

import { createRequire } from "node:module";
import type * as Ai from "ai";
import { ShellwrightError } from "../core/errors.js";

export type AiSdk = typeof Ai;

export const AI_INSTALL_HINT = "shellwright/ai needs the AI SDK, which is not installed: run `npm install ai@7`";

export function loadAi(require: (id: string) => unknown = createRequire(import.meta.url)): AiSdk {
  try {
    return require("ai") as AiSdk;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const missing =
      (code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND") &&
      /['"]ai['"]/.test(error instanceof Error ? error.message.split("\n")[0]! : "");
    if (!missing) throw error;
    throw new ShellwrightError("MISSING_DEPENDENCY", AI_INSTALL_HINT, { cause: error });
  }
}
