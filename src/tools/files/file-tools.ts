/**
 * The file tools of part 2, ready for the registry: read_file, write_file,
 * patch, search_files, and execute_code (whose scripts can call the other four).
 * Each has a create…Tool(options) factory for other limits, deny lists or tools.
 */

import { createExecuteCodeTool } from "../execute-code/execute-code-tool.js";
import { patchTool } from "../patch/patch-tool.js";
import { readFileTool } from "./read-file.js";
import { searchFilesTool } from "./search-files.js";
import type { ToolDefinition } from "../shared/tool-definition.js";
import { writeFileTool } from "./write-file.js";

export { createReadFileTool, readFileTool, type ReadFileToolOptions } from "./read-file.js";
export { createWriteFileTool, writeFileTool, type WriteFileToolOptions } from "./write-file.js";
export { createPatchTool, patchTool, type PatchToolOptions } from "../patch/patch-tool.js";
export { createSearchFilesTool, searchFilesTool, type SearchFilesToolOptions } from "./search-files.js";
export { createExecuteCodeTool, type ExecuteCodeToolOptions } from "../execute-code/execute-code-tool.js";
export { DEFAULT_DENY_PATHS, type WriteGuardOptions } from "./path-guard.js";

/** The four file tools, which execute_code scripts can call by default. */
export const fileOperationTools: readonly ToolDefinition[] = [readFileTool, writeFileTool, patchTool, searchFilesTool] as ToolDefinition[];

/** execute_code with the file tools; build your own with createExecuteCodeTool({ tools: [...] }) to add terminal. */
export const executeCodeTool = createExecuteCodeTool({ tools: fileOperationTools });

export const fileTools: readonly ToolDefinition[] = [...fileOperationTools, executeCodeTool as ToolDefinition];
