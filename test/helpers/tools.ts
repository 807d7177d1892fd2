/** The names of the agent's tools, in the order models see them: from the registry itself, never re-typed. */

import { TOOLS } from "../../src/tools/registry.js";

export const TOOL_NAMES: readonly string[] = TOOLS.map((tool) => tool.name);
