/**
 * Every ```ts block of README.md and docs/*.md type-checks (tsc, module
 * nodenext) against the built package and the real `openai`,
 * `@anthropic-ai/sdk` and `ai` packages, so an example cannot drift from the API.
 *
 * Each block is one ES module. A block that is a fragment names what it takes
 * for granted in an HTML comment on the line just above its fence, which the
 * rendered page hides:
 *
 *     <!-- prelude: declare const session: import("shellwright").Environment; -->
 */

import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, symlink, mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");
const PRELUDE = /^<!--\s*prelude:\s*([\s\S]*?)\s*-->$/;

interface Example {
  file: string;
  line: number;
  code: string;
}

/** The ```ts blocks of a Markdown text, each with the prelude written above it. */
export function tsBlocks(file: string, markdown: string): Example[] {
  const lines = markdown.split("\n");
  const examples: Example[] = [];
  for (let index = 0; index < lines.length; index++) {
    if (lines[index]!.trim() !== "```ts") continue;
    const start = index;
    const body: string[] = [];
    while (++index < lines.length && lines[index]!.trim() !== "```") body.push(lines[index]!);
    const prelude = PRELUDE.exec(lines[start - 1]?.trim() ?? "")?.[1];
    examples.push({
      file,
      line: start + 1,
      code: `${prelude === undefined ? "" : `${prelude}\n`}${body.join("\n")}\n`,
    });
  }
  return examples;
}

async function examples(): Promise<Example[]> {
  const files = [
    "README.md",
    ...(await readdir(join(ROOT, "docs"))).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
  ];
  const found = await Promise.all(files.map(async (file) => tsBlocks(file, await readFile(join(ROOT, file), "utf8"))));
  return found.flat();
}

let project: string;

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), "shellwright-examples-"));
  // The project sees the repository's packages (openai, @anthropic-ai/sdk, ai, @types/node) and the
  // built package itself as `shellwright`, as an application that installed them would.
  await mkdir(join(project, "node_modules"));
  for (const entry of await readdir(join(ROOT, "node_modules"))) {
    if (!entry.startsWith(".")) await symlink(join(ROOT, "node_modules", entry), join(project, "node_modules", entry));
  }
  await symlink(ROOT, join(project, "node_modules", "shellwright"));
  await writeFile(join(project, "package.json"), JSON.stringify({ name: "examples", private: true, type: "module" }));
});

afterAll(async () => {
  if (project !== undefined) await rm(project, { recursive: true, force: true });
});

describe("the examples in README.md and docs/", () => {
  it("finds the blocks and their preludes", () => {
    const [block] = tsBlocks("x.md", "text\n<!-- prelude: declare const a: number; -->\n```ts\na + 1;\n```\n");
    expect(block).toEqual({ file: "x.md", line: 3, code: "declare const a: number;\na + 1;\n" });
  });

  it("type-check against the built package and the real model SDKs", { timeout: 300_000 }, async () => {
    const all = await examples();
    expect(all.length).toBeGreaterThan(10);
    const names = all.map((example, index) => `${example.file.replace(/[/.]/g, "_")}_line${example.line}_${index}.ts`);
    await Promise.all(all.map((example, index) => writeFile(join(project, names[index]!), example.code)));
    await writeFile(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "nodenext",
          target: "es2022",
          lib: ["es2023"],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ["node"],
        },
        files: names,
      }),
    );
    const output = await run(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "."], {
      cwd: project,
      timeout: 280_000,
    }).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(output).toBe("");
  });
});
