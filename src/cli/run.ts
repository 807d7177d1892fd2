/**
 * `shellwright run PLAN.json [--backend NAME] [--check]`: plays a plan of tool
 * calls in one session and prints one JSON line per call. With --check, each
 * result is compared with the step's `expect` and a mismatch makes the exit
 * code 1. Usage and plan errors exit 2.
 */

import { readFile } from "node:fs/promises";
import { createEnvironment, type EnvironmentConfig } from "../backends/index.js";
import { InvalidOptionError } from "../core/errors.js";
import { jsonSyntaxProblem } from "../core/json-error.js";
import { parsePlan, playPlan, type Plan } from "./plan.js";

const USAGE = "usage: shellwright run PLAN.json [--backend NAME] [--check]";

export async function main(args: string[]): Promise<number> {
  let planPath: string | undefined;
  let backend: string | undefined;
  let check = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--check") check = true;
    else if (arg === "--backend" || arg.startsWith("--backend=")) {
      backend = arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : args[++i];
      if (!backend) return usage("--backend needs a value");
    } else if (arg === "-h" || arg === "--help") {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    } else if (arg.startsWith("-")) return usage(`unknown option ${arg}`);
    else if (planPath === undefined) planPath = arg;
    else return usage(`unexpected argument ${JSON.stringify(arg)}`);
  }
  if (planPath === undefined) return usage("the plan file is missing");

  let plan: Plan;
  let text = "";
  try {
    text = await readFile(planPath, "utf8");
    plan = parsePlan(JSON.parse(text));
  } catch (error) {
    // The plan's environment may hold env values: a syntax error says where, never quotes the text.
    const why =
      error instanceof SyntaxError
        ? `it is not valid JSON (${jsonSyntaxProblem(error, text)})`
        : error instanceof Error
          ? error.message
          : String(error);
    process.stderr.write(`shellwright run: cannot use the plan ${planPath}: ${why}\n`);
    return 2;
  }

  const config = { ...plan.environment, ...(backend === undefined ? {} : { backend }) } as EnvironmentConfig;
  let session;
  try {
    session = await createEnvironment(config);
  } catch (error) {
    process.stderr.write(`shellwright run: ${error instanceof Error ? error.message : String(error)}\n`);
    return error instanceof InvalidOptionError ? 2 : 1;
  }

  // Ctrl-C interrupts the running step (its process tree is killed) and ends the run.
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.once("SIGINT", onSignal);
  let failed = false;
  try {
    await playPlan(session, plan.steps, {
      check,
      signal: controller.signal,
      onStep: (report) => {
        if (report.check === "fail") failed = true;
        process.stdout.write(`${JSON.stringify(report)}\n`);
      },
    });
  } finally {
    process.removeListener("SIGINT", onSignal);
    await session.close();
  }
  if (controller.signal.aborted) return 130;
  return failed ? 1 : 0;
}

function usage(message: string): number {
  process.stderr.write(`shellwright run: ${message}\n${USAGE}\n`);
  return 2;
}
