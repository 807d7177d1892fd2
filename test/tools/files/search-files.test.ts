import { describe, expect, it } from "vitest";
import { createSearchFilesTool } from "../../../src/tools/files/search-files.js";
import { toolBackends, useToolFixture } from "../fixture.js";

for (const backend of toolBackends) {
  for (const engine of ["auto", "fallback"] as const) {
    describe.skipIf(!backend.enabled)(`search_files (${engine}) on ${backend.name}`, () => {
      const t = useToolFixture(backend.create);
      const tool = createSearchFilesTool({ engine });
      const search = (args: Record<string, unknown>) => t.call(tool, args);
      let root = "";
      // "auto" uses ripgrep where the backend has it and grep/find elsewhere (a fresh machine may lack it).
      let autoEngine: "rg" | "grep" = "grep";

      it("is set up", async () => {
        root = `${t.scratch}/tree`;
        await t.sh(
          [
            `mkdir -p ${root}/src/deep ${root}/.git ${root}/docs`,
            `cd ${root}`,
            `printf 'hello world\\nnothing\\nhello again\\n' > src/a.ts`,
            `printf 'one\\ntwo\\nhello three\\nfour\\nfive\\n' > src/deep/b.ts`,
            `printf 'hello docs\\n' > docs/readme.md`,
            `printf 'hello hidden\\n' > .git/config`,
            `printf 'hello dotfile\\n' > src/.env`,
            `for i in $(seq 1 120); do echo "needle $i"; done > docs/many.txt`,
            `cd /`,
          ].join(" && "),
        );
        if ((await t.session.execute("command -v rg")).exitCode === 0) autoEngine = "rg";
      });

      it("finds content as {path, line, content}, sorted by path, skipping hidden directories", async () => {
        const result = await search({ pattern: "hello", path: root, output_mode: "content" });
        expect(result.engine).toBe(engine === "auto" ? autoEngine : "grep");
        expect(result.total_count).toBe(4);
        expect(result.matches).toEqual([
          { path: `${root}/docs/readme.md`, line: 1, content: "hello docs" },
          { path: `${root}/src/a.ts`, line: 1, content: "hello world" },
          { path: `${root}/src/a.ts`, line: 3, content: "hello again" },
          { path: `${root}/src/deep/b.ts`, line: 3, content: "hello three" },
        ]);
        expect(result.truncated).toBeUndefined();
      });

      it("filters by glob and gives relative paths for a relative search", async () => {
        await t.sh(`cd ${root}`);
        const result = await search({ pattern: "hel+o", file_glob: "*.ts" });
        expect((result.matches as Array<{ path: string }>).map((m) => m.path)).toEqual([
          "src/a.ts",
          "src/a.ts",
          "src/deep/b.ts",
        ]);
        await t.sh("cd /");
      });

      it("paginates with a true total and a hint", async () => {
        const page = await search({ pattern: "needle", path: root, limit: 50, offset: 100 });
        expect(page.total_count).toBe(120);
        expect((page.matches as unknown[]).length).toBe(20);
        expect((page.matches as Array<{ line: number }>)[0]!.line).toBe(101);
        const first = await search({ pattern: "needle", path: root, limit: 10 });
        expect(first).toMatchObject({
          total_count: 120,
          truncated: true,
          hint: "Results truncated. Use offset=10 to see more, or narrow with a more specific pattern or file_glob.",
        });
      });

      it("shows context lines around the page's matches", async () => {
        const result = await search({ pattern: "three", path: `${root}/src`, context: 1 });
        expect(result.total_count).toBe(1);
        expect(result.matches).toEqual([
          { path: `${root}/src/deep/b.ts`, line: 2, content: "two", context: true },
          { path: `${root}/src/deep/b.ts`, line: 3, content: "hello three" },
          { path: `${root}/src/deep/b.ts`, line: 4, content: "four", context: true },
        ]);
      });

      it("lists only matching files, or counts per file", async () => {
        expect(await search({ pattern: "hello", path: root, output_mode: "files_only" })).toMatchObject({
          total_count: 3,
          files: [`${root}/docs/readme.md`, `${root}/src/a.ts`, `${root}/src/deep/b.ts`],
        });
        expect(await search({ pattern: "hello", path: root, output_mode: "count" })).toMatchObject({
          total_count: 3,
          counts: { [`${root}/docs/readme.md`]: 1, [`${root}/src/a.ts`]: 2, [`${root}/src/deep/b.ts`]: 1 },
        });
      });

      it("finds files by name glob (target files, alias find)", async () => {
        expect(await search({ pattern: "*.ts", target: "find", path: root })).toMatchObject({
          total_count: 2,
          files: [`${root}/src/a.ts`, `${root}/src/deep/b.ts`],
        });
        const paged = await search({ pattern: "*", target: "files", path: root, limit: 2, offset: 1 });
        expect(paged).toMatchObject({ total_count: 4, truncated: true });
        expect(paged.files).toHaveLength(2);
        // A glob that names dot files finds them.
        expect((await search({ pattern: ".git/*", target: "files", path: root })).files).toEqual([
          `${root}/.git/config`,
        ]);
        expect((await search({ pattern: "hello", path: root, file_glob: "*" })).total_count).toBe(4);
        // Searching inside a hidden directory named on purpose works.
        expect((await search({ pattern: "hello", path: `${root}/.git` })).matches).toEqual([
          { path: `${root}/.git/config`, line: 1, content: "hello hidden" },
        ]);
      });

      it("reports no matches, a missing path and a bad pattern", async () => {
        expect(await search({ pattern: "zzz-not-there", path: root })).toMatchObject({ total_count: 0, matches: [] });
        expect((await search({ pattern: "x", path: `${root}/nope` })).error).toBe(
          `Path not found: ${root}/nope. Verify the path exists (use 'terminal' to check).`,
        );
        expect((await search({ pattern: "(unclosed", path: root })).error).toMatch(/^Search failed: /);
        expect((await search({ pattern: "x", output_mode: "lines" })).error).toMatch(
          /^Invalid arguments for search_files: output_mode/,
        );
      });
    });
  }
}
