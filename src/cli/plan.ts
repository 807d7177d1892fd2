/**
 * Plans: a list of tool calls played in one session, each with an optional
 * `expect` that its result must match. `shellwright run` plays them; the
 * matrix test plays examples/matrix.json on every backend.
 *
 * A step:
 *   { "tool": "terminal", "args": { "command": "pwd" },
 *     "expect": { "output": "/tmp\n", "exit_code": 0 },
 *     "skip": "why (optional: the step is reported, not run)" }
 *
 * `expect` matches part of the result: listed keys only, recursively. A value
 * may be a matcher: {"$contains": "text"}, {"$regex": "^a.*z$"}, {"$absent": true}.
 * A string argument may use an earlier result: "${3.session_id}" is the
 * session_id of step 3 (steps count from 1).
 */

import { RE2JS } from "re2js";
import { InvalidOptionError } from "../core/errors.js";
import { describe as describeValue, describeSecret } from "../core/options.js";
import type { Environment } from "../core/environment.js";
import { callTool, findTool, TOOLS } from "../tools/registry.js";
import { argumentProblems } from "../tools/shared/tool-definition.js";
import type { ToolSettings } from "../tools/shared/tool-settings.js";
import type { ToolResult } from "../tools/shared/tool-definition.js";

export interface PlanStep {
  tool: string;
  /** A label for people reading the plan; not used. */
  name?: string;
  args?: Record<string, unknown>;
  expect?: Record<string, unknown>;
  skip?: string;
}

export interface Plan {
  description?: string;
  /** Passed to createEnvironment (the CLI's --backend wins over `backend`). */
  environment?: Record<string, unknown>;
  steps: PlanStep[];
}

export interface StepReport {
  step: number;
  tool: string;
  args?: Record<string, unknown>;
  result?: ToolResult;
  skipped?: string;
  /** With checking on, for steps that have an `expect`. */
  check?: "pass" | "fail";
  mismatches?: string[];
}

const STEP_KEYS = ["tool", "args", "expect", "skip", "name"];

/** Validates a parsed plan file: an array of steps, or {description?, environment?, steps}. */
export function parsePlan(value: unknown): Plan {
  const plan: Plan = Array.isArray(value) ? { steps: value as PlanStep[] } : (value as Plan);
  if (typeof plan !== "object" || plan === null || !Array.isArray(plan.steps)) {
    throw new InvalidOptionError(
      "plan",
      `A plan must be an array of steps or an object with a "steps" array, got ${describeValue(value)}`,
    );
  }
  if (
    plan.environment !== undefined &&
    (typeof plan.environment !== "object" || plan.environment === null || Array.isArray(plan.environment))
  ) {
    throw new InvalidOptionError(
      "plan.environment",
      `plan.environment must be an object, got ${describeSecret(plan.environment)}`,
    );
  }
  plan.steps.forEach((step, index) => {
    const where = `step ${index + 1}`;
    if (typeof step !== "object" || step === null || Array.isArray(step))
      throw new InvalidOptionError(where, `${where} must be an object, got ${describeValue(step)}`);
    for (const key of Object.keys(step)) {
      if (!STEP_KEYS.includes(key))
        throw new InvalidOptionError(
          `${where}.${key}`,
          `${where} has an unknown key ${describeValue(key)}; known keys: ${STEP_KEYS.join(", ")}`,
        );
    }
    if (typeof step.tool !== "string" || step.tool === "")
      throw new InvalidOptionError(
        `${where}.tool`,
        `${where}.tool must be a tool name, got ${describeValue(step.tool)}`,
      );
    for (const key of ["args", "expect"] as const) {
      const part = step[key];
      if (part !== undefined && (typeof part !== "object" || part === null || Array.isArray(part))) {
        throw new InvalidOptionError(
          `${where}.${key}`,
          `${where}.${key} must be an object, got ${describeValue(part)}`,
        );
      }
    }
    if (step.skip !== undefined && typeof step.skip !== "string")
      throw new InvalidOptionError(
        `${where}.skip`,
        `${where}.skip must be a string (the reason), got ${describeValue(step.skip)}`,
      );
  });
  plan.steps.forEach((step, index) => checkStep(step, index + 1, plan.steps));
  return plan;
}

/**
 * What can be known about a step before anything runs: its tool is one the
 * plan can call, its arguments are ones that tool takes (their types too,
 * unless a value comes from an earlier result), each `${N.path}` names an
 * earlier step that runs, each `$regex` compiles. A skipped step's tool is
 * checked too (a typo there is still a typo), not its arguments: a step kept
 * for later may not have them all yet.
 */
function checkStep(step: PlanStep, number: number, steps: readonly PlanStep[]): void {
  const where = `step ${number}`;
  const tool = findTool(step.tool);
  if (tool === undefined)
    throw new InvalidOptionError(
      `${where}.tool`,
      `${where} names the tool ${describeValue(step.tool)}, which a plan cannot call; the tools are: ${TOOLS.map((t) => t.name).join(", ")}`,
    );
  if (step.skip !== undefined) return;
  const references = [...JSON.stringify(step.args ?? {}).matchAll(REFERENCE)].map((match) => Number(match[1]));
  for (const earlier of references) {
    if (earlier < 1 || earlier >= number)
      throw new InvalidOptionError(
        `${where}.args`,
        `${where}.args uses \${${earlier}.…}, but a step can use only the results of the steps before it (${number === 1 ? "step 1 has none" : `1 to ${number - 1}`})`,
      );
    if (steps[earlier - 1]!.skip !== undefined)
      throw new InvalidOptionError(
        `${where}.args`,
        `${where}.args uses \${${earlier}.…}, but step ${earlier} is skipped and has no result`,
      );
  }
  const problems = argumentProblems(tool, step.args ?? {}, references.length > 0);
  if (problems.length > 0)
    throw new InvalidOptionError(`${where}.args`, `${where} (${tool.name}) has bad arguments: ${problems.join("; ")}`);
  for (const pattern of regexMatchers(step.expect)) {
    try {
      new RegExp(pattern);
    } catch (error) {
      throw new InvalidOptionError(
        `${where}.expect`,
        `${where}.expect has a $regex that does not compile: ${(error as Error).message}`,
      );
    }
  }
}

const REFERENCE = /\$\{(\d+)\.[\w.]+\}/g;

function regexMatchers(value: unknown): string[] {
  if (typeof value !== "object" || value === null) return [];
  if (isMatcher(value) && "$regex" in value) return [String((value as { $regex: unknown }).$regex)];
  return Object.values(value).flatMap(regexMatchers);
}

export interface PlayOptions {
  /** Compare results with `expect`. */
  check?: boolean;
  settings?: ToolSettings;
  signal?: AbortSignal;
  /** Called after each step, in order; the next step waits for what it returns. */
  onStep?: (report: StepReport) => void | Promise<void>;
  /** A step's output as it arrives (the terminal tool's, execute_code's), secrets masked as in its result. */
  onOutput?: (step: number, tool: string, text: string) => void;
}

/** Plays the steps in `session`. Returns one report per step. */
export async function playPlan(
  session: Environment,
  steps: readonly PlanStep[],
  options: PlayOptions = {},
): Promise<StepReport[]> {
  const reports: StepReport[] = [];
  for (const [index, step] of steps.entries()) {
    const number = index + 1;
    let report: StepReport;
    if (step.skip !== undefined) {
      report = { step: number, tool: step.tool, skipped: step.skip };
    } else if (options.signal?.aborted) {
      report = { step: number, tool: step.tool, skipped: "interrupted" };
    } else {
      const args = substitute(step.args ?? {}, reports) as Record<string, unknown>;
      const result = await callTool(step.tool, args, {
        session,
        callId: `step-${number}`,
        ...(options.settings ? { settings: options.settings } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onOutput ? { onOutput: (text: string) => options.onOutput?.(number, step.tool, text) } : {}),
      });
      report = { step: number, tool: step.tool, args, result };
      if (options.check && step.expect !== undefined) {
        const mismatches = matchExpected(step.expect, result);
        report.check = mismatches.length === 0 ? "pass" : "fail";
        if (mismatches.length > 0) report.mismatches = mismatches;
      }
    }
    reports.push(report);
    await options.onStep?.(report);
  }
  return reports;
}

/** Differences between `expected` and `actual`, one line each; empty when they match. */
export function matchExpected(expected: unknown, actual: unknown, path = "result"): string[] {
  if (isMatcher(expected)) {
    const m = expected as Record<string, unknown>;
    if ("$absent" in m)
      return (actual === undefined) === (m.$absent === true)
        ? []
        : [`${path}: expected ${m.$absent ? "no value" : "a value"}, got ${JSON.stringify(actual)}`];
    if (typeof actual !== "string") return [`${path}: expected a string, got ${JSON.stringify(actual)}`];
    if ("$contains" in m)
      return actual.includes(String(m.$contains))
        ? []
        : [`${path}: expected to contain ${JSON.stringify(m.$contains)}, got ${JSON.stringify(clip(actual))}`];
    const regex = linearRegex(String(m.$regex));
    if (typeof regex === "string")
      return [`${path}: $regex ${JSON.stringify(String(m.$regex))} cannot be used: ${regex}`];
    return regex.test(actual)
      ? []
      : [`${path}: expected to match /${String(m.$regex)}/, got ${JSON.stringify(clip(actual))}`];
  }
  if (typeof expected === "object" && expected !== null && !Array.isArray(expected)) {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual))
      return [`${path}: expected an object, got ${JSON.stringify(actual)}`];
    return Object.entries(expected).flatMap(([key, value]) =>
      matchExpected(value, (actual as Record<string, unknown>)[key], `${path}.${key}`),
    );
  }
  return JSON.stringify(expected) === JSON.stringify(actual)
    ? []
    : [
        `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(typeof actual === "string" ? clip(actual) : actual)}`,
      ];
}

/** A plan's $regex, matched in RE2's linear time so that no pattern hangs the run; a string says why it cannot be. */
function linearRegex(source: string): { test(text: string): boolean } | string {
  try {
    return RE2JS.compile(RE2JS.translateRegExp(source), 0);
  } catch (error) {
    return `${(error as Error).message} (RE2 syntax: no lookahead or backreferences)`;
  }
}

function isMatcher(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && ["$contains", "$regex", "$absent"].includes(keys[0]!);
}

const clip = (text: string): string => (text.length > 300 ? `${text.slice(0, 300)}…` : text);

/** Replaces `${N.path}` in string arguments with the value at `path` in step N's result. */
function substitute(value: unknown, reports: readonly StepReport[]): unknown {
  if (typeof value === "string") {
    const whole = /^\$\{(\d+)\.([\w.]+)\}$/.exec(value);
    if (whole) return lookup(reports, Number(whole[1]), whole[2]!);
    return value.replace(/\$\{(\d+)\.([\w.]+)\}/g, (_, step: string, path: string) =>
      String(lookup(reports, Number(step), path)),
    );
  }
  if (Array.isArray(value)) return value.map((item) => substitute(item, reports));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, reports)]));
  }
  return value;
}

function lookup(reports: readonly StepReport[], step: number, path: string): unknown {
  let value: unknown = reports[step - 1]?.result;
  for (const key of path.split("."))
    value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}
