export { createEnvironment, BACKENDS } from "./backends/index.js";
export type { BackendName, Environment, EnvironmentConfig } from "./backends/index.js";
export type { CommonConfig } from "./backends/shared/config.js";
export type { LocalConfig } from "./backends/local/config.js";
export type { SandboxConfig, SandboxNetwork } from "./backends/local/sandbox/config.js";
export type { DockerConfig } from "./backends/docker/config.js";
export type { SshConfig } from "./backends/ssh/config.js";
export type { DockerCall } from "./backends/docker/engine.js";
export type { ApptainerConfig } from "./backends/apptainer/config.js";
export type { DaytonaConfig } from "./backends/daytona/config.js";
export type { E2bConfig } from "./backends/e2b/config.js";
export type { ModalConfig } from "./backends/modal/config.js";
export type { ModalApi, ModalSandbox } from "./backends/modal/transport.js";
export type { DaytonaApi, DaytonaSandbox } from "./backends/daytona/transport.js";
export type { E2bConnection, E2bSandbox, E2bSandboxClass } from "./backends/e2b/transport.js";
export { Session } from "./core/session.js";
export type { SessionOptions } from "./core/session-options.js";
export type { ExecuteOptions, ExecuteResult, SessionState } from "./core/environment.js";
export type { BackendFiles, KillSignal, ProcessHandle, RunOptions, Transport } from "./core/transport.js";
export {
  BackendUnavailableError,
  CheckpointError,
  FileError,
  InvalidOptionError,
  ProcessError,
  SessionClosedError,
  SessionNotFoundError,
  ShellwrightError,
  SpawnError,
  SyncError,
  UnsupportedError,
  isShellwrightError,
} from "./core/errors.js";
export type { CheckpointErrorReason, ErrorCode, FileErrorReason } from "./core/errors.js";
export type {
  Checkpoint,
  CheckpointContents,
  CheckpointOptions,
  FilesystemSnapshot,
  ForkOptions,
  RollbackOptions,
  WorkspaceCopy,
} from "./core/checkpoint.js";
export { files } from "./sdk/files.js";
export { spawn } from "./sdk/spawn.js";
export { portUrl } from "./sdk/port-url.js";
export type { PortUrl } from "./sdk/port-url.js";
export type { ProcessResult, SpawnedProcess, SpawnOptions } from "./sdk/spawn.js";
export type {
  CallOptions,
  EnvironmentFiles,
  FileEntry,
  FileEvent,
  FilesOptions,
  FileType,
  FileWatcher,
  WatchOptions,
  WriteData,
  WriteOptions,
} from "./sdk/files.js";
export { TOOLS, callTool, findTool, toolSchemas } from "./tools/registry.js";
export { defineTool, inputJsonSchema, runTool } from "./tools/shared/tool-definition.js";
export type { ToolContext, ToolDefinition, ToolResult } from "./tools/shared/tool-definition.js";
export type {
  ExecuteCodeResult,
  PatchResult,
  PersistedToolResult,
  ProcessExitFields,
  ProcessListEntry,
  ProcessToolResult,
  ReadFileResult,
  RegistryToolName,
  SearchFilesResult,
  SearchMatch,
  TerminalResult,
  ToolErrorResult,
  ToolResultOf,
  ToolResults,
  UnifiedExecResult,
  CheckpointEntry,
  CheckpointToolResult,
  WriteFileResult,
} from "./tools/tool-results.js";
export { DEFAULT_TOOL_SETTINGS, toolSettings } from "./tools/shared/tool-settings.js";
export type { ProcessSettings, ToolSettings, ToolSettingsInput } from "./tools/shared/tool-settings.js";
export { blockDangerousCommands, DANGEROUS_PATTERNS, findDangerousPattern } from "./tools/terminal/approval.js";
export type { ApprovalHook, ApprovalRequest, DangerousPattern } from "./tools/terminal/approval.js";
export { enforceTurnBudget, persistLargeResult, persistResult, saveText } from "./tools/shared/result-persistence.js";
export type { SavedText, TurnResult } from "./tools/shared/result-persistence.js";
export { drainCompletionEvents, processRegistry } from "./tools/process/process-registry.js";
export { execCommandTool, UNIFIED_EXEC_TOOLS, writeStdinTool } from "./tools/unified-exec/unified-exec.js";
export { checkpointTool, CHECKPOINT_TOOLS } from "./tools/checkpoint/checkpoint-tool.js";
export { ANTHROPIC_NATIVE_TOOLS, OPENAI_NATIVE_TOOLS } from "./tools/native/native-tools.js";
export { anthropicBashTool, createBashTool } from "./tools/native/anthropic-bash.js";
export type { BashToolOptions } from "./tools/native/anthropic-bash.js";
export { anthropicTextEditorTool, createTextEditorTool } from "./tools/native/anthropic-text-editor.js";
export type { TextEditorToolOptions } from "./tools/native/anthropic-text-editor.js";
export { createApplyPatchTool, openaiApplyPatchTool } from "./tools/native/openai-apply-patch.js";
export type { ApplyPatchToolOptions } from "./tools/native/openai-apply-patch.js";
export { openaiShellTool } from "./tools/native/openai-shell.js";
export type {
  BackgroundProcess,
  CompletionEvent,
  ProcessRegistry,
  ProcessStatus,
  PtySize,
  PtyState,
} from "./tools/process/process-registry.js";
export type { PatternWait, ScreenShot } from "./tools/process/pty-terminal.js";
export { matchExpected, parsePlan, playPlan } from "./cli/plan.js";
export type { Plan, PlanStep, StepReport } from "./cli/plan.js";
export type { GatewayConfig } from "./backends/gateway/config.js";
export { startGateway } from "./gateway/server.js";
export type { Gateway, GatewayOptions } from "./gateway/server.js";
export { FileSync, normalizeSyncConfig } from "./sync/index.js";
export type {
  DirectoryMirror,
  FileSyncOptions,
  FileUpload,
  SyncConfig,
  SyncDirectorySpec,
  SyncFileSpec,
  SyncReport,
  SyncTransfer,
  TreeEntry,
} from "./sync/index.js";
export { handleToolCall, toolDefinitions, TOOL_FORMATS } from "./agents/definitions.js";
export { anthropicToolResult, handleResponsesItem } from "./agents/native-calls.js";
export type { AnthropicToolResultBlock, ResponsesToolCall, ResponsesToolOutput } from "./agents/native-calls.js";
export type {
  AnthropicToolDefinition,
  HandleToolCallOptions,
  JsonSchemaToolDefinition,
  NativeToolDeclaration,
  ObjectJsonSchema,
  OpenAIResponsesToolDefinition,
  OpenAIToolDefinition,
  ToolDefinitionsOptions,
  ToolFormat,
} from "./agents/definitions.js";
export { createEnvironmentPool } from "./pool/create-pool.js";
export type { EnvironmentPool, PoolStats } from "./pool/pool.js";
export type { PoolOptions } from "./pool/options.js";
