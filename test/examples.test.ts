/**
 * Every program in examples/ runs, as a user runs it, and type-checks.
 * On a Node that strips types itself (22.18+, or 22.6+ with a flag) the .ts
 * file is run as it is. On an older one (Node 20 here) its types are erased
 * by TypeScript's transpileModule, which, like Node, only removes them
 * (they are checked with erasableSyntaxOnly below), and the module runs from
 * the package's root, where `shellwright` resolves to the package itself
 * as it does from examples/.
 */

import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { noStaticHelper } from "./helpers/native-helper.js";
import { HAVE_BWRAP } from "./backends/local/sandbox/fixture.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");
const stripsTypes = (process.features as { typescript?: string | false }).typescript !== undefined;

/** Node's arguments that run examples/FILE. */
function nodeArgs(file: string): string[] {
  const path = join(ROOT, "examples", file);
  if (stripsTypes) return [path];
  const { outputText } = ts.transpileModule(readFileSync(path, "utf8"), {
    fileName: path,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
  });
  return ["--input-type=module", "-e", outputText];
}

interface Example {
  file: string;
  /** What its output must show. */
  prints: RegExp;
  /** Why it cannot run here, if it cannot. */
  skip?: string | undefined;
}

const EXAMPLES: Example[] = [
  {
    file: "first-session.ts",
    prints: /^hello from \/tmp .*\nwc -c read 12 bytes\n[^]*timed out: true exit code 124\nstill in \/tmp\n$/,
  },
  {
    file: "agent-loop.ts",
    prints: /tool result: \{"output":"3\\n\/tmp\/agent-demo\\n","exit_code":0\}\nanswer: letters.txt has 3 lines.\n$/,
  },
  {
    file: "mcp-client.ts",
    prints: /^tools: terminal, process, .*\nterminal: \{"output":"yes in \/tmp\\n","exit_code":0\}\n$/,
  },
  { file: "pool.ts", prints: /^first saw nothing\nsecond saw nothing\nthird saw nothing\nstats: / },
  // The next prompt may be on the screen already when it is read.
  { file: "pty-repl.ts", prints: /^wait: matched .*42.*\nscreen:\n[^]*> 6 \* 7\n42\n(>\n)?$/, skip: noStaticHelper },
  {
    file: "docker-session.ts",
    prints: /^yes: Debian GNU\/Linux 12 \(bookworm\) in \/tmp\nnetwork interfaces: 1\n$/,
    skip: process.env.SHELLWRIGHT_TEST_DOCKER === "1" ? undefined : "no Docker Engine (SHELLWRIGHT_TEST_DOCKER=1)",
  },
  {
    file: "sandboxed-run.ts",
    prints: /^in the cwd: built \(exit 0\)\noutside it: .*Read-only file system \(exit 1\)\n/,
    skip: HAVE_BWRAP ? undefined : "no bubblewrap",
  },
];

describe("examples/", () => {
  it("lists every example program here", () => {
    const programs = readdirSync(join(ROOT, "examples")).filter((file) => file.endsWith(".ts"));
    expect(programs.sort()).toEqual(EXAMPLES.map((example) => example.file).sort());
  });

  for (const example of EXAMPLES) {
    it(`${example.file} runs and prints what it says`, { timeout: 150_000 }, async (context) => {
      if (example.skip !== undefined) context.skip(example.skip);
      const { stdout } = await run(process.execPath, nodeArgs(example.file), {
        cwd: ROOT,
        timeout: 120_000,
        env: {
          ...process.env,
          SHELLWRIGHT_EXAMPLE_IMAGE: process.env.SHELLWRIGHT_DOCKER_IMAGE ?? "shellwright-test:bookworm",
        },
      });
      expect(stdout).toMatch(example.prints);
    });
  }

  it("type-check, with erasable syntax only, so Node can run them as they are", { timeout: 180_000 }, async () => {
    // `npm run check` type-checks them with the project (tsconfig.json); this adds the one rule that is theirs.
    const files = EXAMPLES.map((example) => join("examples", example.file));
    const flags = ["--noEmit", "--strict", "--erasableSyntaxOnly", "--skipLibCheck", "--types", "node"];
    const module = ["--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022"];
    await run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), ...flags, ...module, ...files], {
      cwd: ROOT,
    });
  });
});
