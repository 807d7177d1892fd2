/**
 * Loads the OpenAI Agents SDK (`@openai/agents`, an optional peer dependency)
 * when `shellwright/openai-agents` is imported, so that a project without it
 * reads what to install instead of Node's bare ERR_MODULE_NOT_FOUND (see
 * ai/load-ai.ts for why `require`).
 */

import { createRequire } from "node:module";
import type * as Agents from "@openai/agents";
import { ShellwrightError } from "../core/errors.js";

export type AgentsSdk = typeof Agents;

export const AGENTS_INSTALL_HINT =
  "shellwright/openai-agents needs the OpenAI Agents SDK, which is not installed: run `npm install @openai/agents`";

export function loadAgents(require: (id: string) => unknown = createRequire(import.meta.url)): AgentsSdk {
  try {
    return require("@openai/agents") as AgentsSdk;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const missing =
      (code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND") &&
      /['"]@openai\/agents['"]/.test(error instanceof Error ? error.message.split("\n")[0]! : "");
    if (!missing) throw error;
    throw new ShellwrightError("MISSING_DEPENDENCY", AGENTS_INSTALL_HINT, { cause: error });
  }
}
