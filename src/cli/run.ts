/**
 * `shellwright run PLAN.json [options]` (flags: specs.ts): plays a plan of
 * tool calls in one session and prints one JSON line per call. With --check,
 * each result is compared with the step's `expect` and a mismatch makes the
 * exit code 1. Usage and plan errors exit 2; SIGINT, SIGTERM and SIGHUP stop
 * the running step and exit 130, 143 and 129.
 */

import { readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createEnvironment, withOutputCap, type EnvironmentConfig } from "../backends/index.js";
import { InvalidOptionError } from "../core/errors.js";
import { inCliWords } from "./option-words.js";
import { jsonSyntaxProblem } from "../core/json-error.js";
import { toolSettings } from "../tools/shared/tool-settings.js";
import { integerValue, stringValue, UsageError, usageLine, type ParsedCommand } from "./args.js";
import { readConfigFile } from "./config-file.js";
import { catchInterrupts } from "./interrupt.js";
import { parsePlan, playPlan, type Plan } from "./plan.js";
import { redactText } from "./secrets.js";
import { run as spec } from "./specs.js";
import { StepProgress } from "./step-progress.js";
import { READER_GONE_EXIT_CODE, watchStdoutReader } from "./stdout-reader.js";
import { writeStderr } from "../core/stderr.js";

export async function run(parsed: ParsedCommand): Promise<number> {
  const { values } = parsed;
  const planPath = planPathOf(parsed);
  const backend = stringValue(values, "backend");
  const check = values.check === true;
  const maxOutputBytes = integerValue(values, "max-output-bytes", 1);
  const configPath = stringValue(values, "config");
  const fileConfig = readConfigFile(configPath);

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
    writeStderr(`shellwright run: cannot use the plan ${planPath}: ${why}\n`);
    return 2;
  }

  const config = withOutputCap(
    { ...plan.environment, ...fileConfig, ...(backend === undefined ? {} : { backend }) },
    maxOutputBytes,
  ) as EnvironmentConfig;
  const interrupt = catchInterrupts();
  let session;
  try {
    session = await createEnvironment(config);
  } catch (caught) {
    interrupt.dispose();
    const error = inCliWords(caught, {
      config,
      values,
      flags: { backend: "backend", maxOutputBytes: "max-output-bytes" },
      file: { path: configPath, config: fileConfig },
      plan: { path: planPath, config: plan.environment ?? {} },
    });
    writeStderr(`shellwright run: ${redactText(error instanceof Error ? error.message : String(error))}\n`);
    return error instanceof InvalidOptionError || error instanceof UsageError ? 2 : 1;
  }

  let failed = false;
  // A reader that went away (`| head -1`) stops the running step, as a signal does.
  const stdout = watchStdoutReader();
  // A step's output as it runs goes to stderr: stdout stays one JSON line per step.
  const progress = new StepProgress((text) => process.stderr.write(text));
  try {
    await playPlan(session, plan.steps, {
      check,
      signal: AbortSignal.any([interrupt.signal, stdout.signal]),
      ...(maxOutputBytes === undefined ? {} : { settings: toolSettings({ inlineOutputChars: maxOutputBytes }) }),
      onOutput: (step, tool, text) => progress.write(step, tool, text),
      onStep: async (report) => {
        progress.end();
        if (report.check === "fail") failed = true;
        await stdout.write(`${JSON.stringify(report)}\n`);
      },
    });
  } finally {
    try {
      await session.close();
    } finally {
      interrupt.dispose();
      stdout.dispose();
    }
  }
  return interrupt.exitCode() ?? (stdout.gone() ? READER_GONE_EXIT_CODE : failed ? 1 : 0);
}

/** The package's own examples/ (shipped in the tarball), next to dist/. */
const EXAMPLES = fileURLToPath(new URL("../../examples/", import.meta.url));

/**
 * PLAN.json, or the shipped example `--example NAME` names: an installed
 * user's first command works without a copy of the repository's examples/.
 */
function planPathOf(parsed: ParsedCommand): string {
  const example = stringValue(parsed.values, "example");
  const [given] = parsed.positionals;
  if (example === undefined) {
    if (given === undefined) throw new UsageError(`missing PLAN.json (or --example NAME); ${usageLine(spec)}`);
    return given;
  }
  if (given !== undefined) throw new UsageError(`give PLAN.json or --example ${example}, not both`);
  let names: string[] = [];
  try {
    names = readdirSync(EXAMPLES)
      .filter((file) => file.endsWith(".json"))
      .map((file) => file.slice(0, -".json".length));
  } catch {
    // No examples/ next to dist/: every name is unknown, and the message says none ship.
  }
  if (!names.includes(example))
    throw new UsageError(
      `unknown example ${JSON.stringify(example)}; the package ships: ${names.sort().join(", ") || "none"}`,
    );
  return `${EXAMPLES}${example}.json`;
}
