/**
 * The tools' limits and hooks, in one object. Every field has a default, so a
 * caller passes only what it wants to change; `toolSettings()` validates the
 * whole object once, naming the field and the value it got.
 */

import { InvalidOptionError } from "../../core/errors.js";
import { describe, fraction, plainObject, positiveInteger, positiveNumber, rejectUnknown } from "../../core/options.js";
import type { ApprovalHook } from "../terminal/approval.js";

export interface ProcessSettings {
  /** Output kept in memory per background process (the tail). @default 200000 */
  bufferChars: number;
  /** Background processes tracked per session; finished ones are dropped first. @default 64 */
  maxProcesses: number;
  /** How long a finished process stays listed. @default 1800000 (30 minutes) */
  finishedTtlMs: number;
  /** Between SIGTERM and SIGKILL when `process kill` stops a tree. @default 2000 */
  killGraceMs: number;
  /** How often the backend checks whether a watched process ended (`wait`, `notify_on_complete`). @default 200 */
  watchIntervalMs: number;
  /**
   * The most a background process's log keeps inside the backend: its first
   * quarter is the start of the output, the rest a rolling tail (docs/tools.md).
   * From 65536 to 16777216. @default 4194304 (4 MiB)
   */
  maxLogBytes: number;
}

export interface ToolSettings {
  /** A foreground `terminal` call may ask for at most this; above it the tool advises background. @default 600 */
  maxForegroundTimeoutSeconds: number;
  /** Terminal output kept inline; above it head and tail are shown and the whole output is saved. @default 50000 */
  inlineOutputChars: number;
  /** Share of inlineOutputChars taken from the start of the output. @default 0.4 */
  inlineHeadFraction: number;
  /** Terminal output held in memory for saving; beyond it only head and tail are kept (the cut is said). @default 10000000 */
  captureOutputChars: number;
  /**
   * Consulted before a `terminal` command runs on the local and SSH backends
   * (container and sandbox backends are their own boundary). See
   * `blockDangerousCommands()` for a ready-made one. @default none: every command runs
   */
  approve: ApprovalHook | undefined;
  /** A result longer than this (JSON characters) is saved into the backend and replaced by a preview. @default 100000 */
  resultThresholdChars: number;
  /** Per-tool thresholds; `read_file` is never persisted whatever is set. @default {} */
  toolThresholdChars: Record<string, number>;
  /** Characters of a persisted result shown in its preview. @default 1500 */
  previewChars: number;
  /** After one turn of tool calls, the largest results are persisted until their sum is below this. @default 200000 */
  turnBudgetChars: number;
  /** Where results go when the write inside the backend fails; must be a directory of ours, mode 0700. @default `<os tmpdir>/shellwright-results-<uid>` */
  hostResultsDir: string | undefined;
  /**
   * Mask secrets in every result and streamed output a tool gives: the
   * session's secret values (Environment.secretValues) and well-known key
   * shapes, as `[REDACTED]` (docs/secrets.md). `execute()` itself stays raw. @default true
   */
  redactSecrets: boolean;
  /**
   * A foreground `terminal` command that prints nothing for this long is checked for a program waiting on a
   * terminal nobody types into (an editor, a REPL, a prompt), which is then stopped with advice; 0 turns it off. @default 3000
   */
  stuckInputMs: number;
  processes: ProcessSettings;
}

export type ToolSettingsInput = Partial<Omit<ToolSettings, "processes">> & { processes?: Partial<ProcessSettings> };

export const DEFAULT_PROCESS_SETTINGS: Readonly<ProcessSettings> = Object.freeze({
  bufferChars: 200_000,
  maxProcesses: 64,
  finishedTtlMs: 30 * 60_000,
  killGraceMs: 2000,
  watchIntervalMs: 200,
  maxLogBytes: 4 * 1024 * 1024,
});

export const DEFAULT_TOOL_SETTINGS: Readonly<ToolSettings> = Object.freeze({
  maxForegroundTimeoutSeconds: 600,
  inlineOutputChars: 50_000,
  inlineHeadFraction: 0.4,
  captureOutputChars: 10_000_000,
  approve: undefined,
  resultThresholdChars: 100_000,
  toolThresholdChars: Object.freeze({}) as Record<string, number>,
  previewChars: 1500,
  turnBudgetChars: 200_000,
  hostResultsDir: undefined,
  redactSecrets: true,
  stuckInputMs: 3000,
  processes: DEFAULT_PROCESS_SETTINGS,
});

const KEYS = Object.keys(DEFAULT_TOOL_SETTINGS);
const PROCESS_KEYS = Object.keys(DEFAULT_PROCESS_SETTINGS);

/** Validates settings once and fills in the defaults. */
export function toolSettings(input: ToolSettingsInput | ToolSettings = {}): ToolSettings {
  const raw = plainObject("settings", input);
  rejectUnknown("tool settings", raw, KEYS);
  const d = DEFAULT_TOOL_SETTINGS;
  const rawProcesses = plainObject("settings.processes", raw.processes);
  rejectUnknown("process settings", rawProcesses, PROCESS_KEYS);
  const p = DEFAULT_PROCESS_SETTINGS;
  if (raw.approve !== undefined && typeof raw.approve !== "function") {
    throw new InvalidOptionError("approve", `approve must be a function, got ${describe(raw.approve)}`);
  }
  const thresholds = plainObject("toolThresholdChars", raw.toolThresholdChars);
  for (const [name, value] of Object.entries(thresholds)) {
    if (typeof value !== "number" || !(value >= 0)) {
      throw new InvalidOptionError(
        `toolThresholdChars.${name}`,
        `toolThresholdChars.${name} must be a number of characters (0 or more), got ${describe(value)}`,
      );
    }
  }
  if (raw.hostResultsDir !== undefined && (typeof raw.hostResultsDir !== "string" || raw.hostResultsDir === "")) {
    throw new InvalidOptionError(
      "hostResultsDir",
      `hostResultsDir must be a directory path, got ${describe(raw.hostResultsDir)}`,
    );
  }
  const stuckInputMs = raw.stuckInputMs ?? d.stuckInputMs;
  if (typeof stuckInputMs !== "number" || !Number.isFinite(stuckInputMs) || stuckInputMs < 0) {
    throw new InvalidOptionError(
      "stuckInputMs",
      `stuckInputMs must be a number of milliseconds (0 turns the check off), got ${describe(raw.stuckInputMs)}`,
    );
  }
  if (raw.redactSecrets !== undefined && typeof raw.redactSecrets !== "boolean") {
    throw new InvalidOptionError(
      "redactSecrets",
      `redactSecrets must be a boolean, got ${describe(raw.redactSecrets)}`,
    );
  }
  return {
    maxForegroundTimeoutSeconds: positiveSeconds(
      "maxForegroundTimeoutSeconds",
      raw.maxForegroundTimeoutSeconds,
      d.maxForegroundTimeoutSeconds,
    ),
    inlineOutputChars: positiveInteger("inlineOutputChars", raw.inlineOutputChars, d.inlineOutputChars),
    inlineHeadFraction: fraction("inlineHeadFraction", raw.inlineHeadFraction, d.inlineHeadFraction),
    captureOutputChars: positiveInteger("captureOutputChars", raw.captureOutputChars, d.captureOutputChars),
    approve: raw.approve as ApprovalHook | undefined,
    resultThresholdChars: positiveInteger("resultThresholdChars", raw.resultThresholdChars, d.resultThresholdChars),
    toolThresholdChars: thresholds as Record<string, number>,
    previewChars: positiveInteger("previewChars", raw.previewChars, d.previewChars),
    turnBudgetChars: positiveInteger("turnBudgetChars", raw.turnBudgetChars, d.turnBudgetChars),
    hostResultsDir: raw.hostResultsDir as string | undefined,
    redactSecrets: raw.redactSecrets ?? d.redactSecrets,
    stuckInputMs,
    processes: {
      bufferChars: positiveInteger("processes.bufferChars", rawProcesses.bufferChars, p.bufferChars),
      maxProcesses: positiveInteger("processes.maxProcesses", rawProcesses.maxProcesses, p.maxProcesses),
      finishedTtlMs: positiveNumber("processes.finishedTtlMs", rawProcesses.finishedTtlMs, p.finishedTtlMs),
      killGraceMs: positiveNumber("processes.killGraceMs", rawProcesses.killGraceMs, p.killGraceMs),
      watchIntervalMs: positiveNumber("processes.watchIntervalMs", rawProcesses.watchIntervalMs, p.watchIntervalMs),
      maxLogBytes: logBytes(rawProcesses.maxLogBytes, p.maxLogBytes),
    },
  };
}

function logBytes(value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 65_536 || value > 16_777_216) {
    throw new InvalidOptionError(
      "processes.maxLogBytes",
      `processes.maxLogBytes must be a whole number of bytes from 65536 to 16777216 (16 MiB), got ${describe(value)}`,
    );
  }
  return value;
}

function positiveSeconds(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new InvalidOptionError(name, `${name} must be a positive number of seconds, got ${describe(value)}`);
  }
  return value;
}
