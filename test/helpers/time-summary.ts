/**
 * Ends a test run with where its time went: seconds per top-level folder of
 * test/ and per compat entry, so that CI's log shows which area to make
 * cheaper. Files run side by side, so the figures add up to more than the
 * run's wall time; they compare areas, they do not time the run.
 */

import { relative } from "node:path";
import { experimental_getRunnerTask, type Reporter, type TestModule, type TestRunEndReason } from "vitest/node";

export interface TimedFile {
  /** The file's path below test/, e.g. "compat/sdk.test.ts". */
  path: string;
  seconds: number;
  /** The file's top-level describe blocks, each with its tests and hooks. */
  suites: ReadonlyArray<{ name: string; seconds: number }>;
}

/**
 * The compat suites name each top-level block `<what>: <entry>` ("compat: docker-plain",
 * "pool compat: ssh"): the entry is what follows the last ": ".
 */
function compatEntry(file: TimedFile, suiteName: string): string | undefined {
  if (!file.path.startsWith("compat/")) return undefined;
  const at = suiteName.lastIndexOf(": ");
  return at === -1 ? undefined : suiteName.slice(at + 2);
}

function line(title: string, seconds: Map<string, number>): string {
  const sorted = [...seconds].sort((a, b) => b[1] - a[1]);
  return `${title}: ${sorted.map(([name, s]) => `${name} ${Math.round(s)}`).join(", ")}`;
}

/** The two lines, e.g. "Seconds per folder: compat 1620, tools 912, …" and "Seconds per compat entry: …". */
export function timeSummary(files: readonly TimedFile[]): string[] {
  const perFolder = new Map<string, number>();
  const perEntry = new Map<string, number>();
  for (const file of files) {
    const slash = file.path.indexOf("/");
    const folder = slash === -1 ? "(top-level files)" : file.path.slice(0, slash);
    perFolder.set(folder, (perFolder.get(folder) ?? 0) + file.seconds);
    for (const suite of file.suites) {
      const entry = compatEntry(file, suite.name);
      if (entry !== undefined) perEntry.set(entry, (perEntry.get(entry) ?? 0) + suite.seconds);
    }
  }
  const lines = [line("Seconds per folder of test/", perFolder)];
  if (perEntry.size > 0) lines.push(line("Seconds per compat entry (test/compat/)", perEntry));
  return lines;
}

function timedFile(module: TestModule): TimedFile {
  const ran = [...module.children.suites()].filter((suite) => suite.state() !== "skipped");
  const suites = ran.map((suite) => ({
    name: suite.name,
    // The suite's own runner result counts its beforeAll/afterAll (a compat entry's session) too.
    seconds: (experimental_getRunnerTask(suite).result?.duration ?? 0) / 1000,
  }));
  return {
    path: relative(module.project.config.root, module.moduleId).replace(/^test\//, ""),
    seconds: module.diagnostic().duration / 1000,
    suites,
  };
}

export class TimeSummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, _errors: unknown, reason: TestRunEndReason): void {
    if (reason === "interrupted" || modules.length === 0) return;
    process.stdout.write(`\n${timeSummary(modules.map(timedFile)).join("\n")}\n`);
  }
}
