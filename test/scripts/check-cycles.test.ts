/** scripts/check-cycles.mjs on small trees written for each case: it must fail on every kind of cycle and pass a clean tree. */

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const script = join(import.meta.dirname, "../../scripts/check-cycles.mjs");
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** Writes `files` (path -> source) under a fresh root and runs the script on it. */
function check(files: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), "sw-cycles-"));
  roots.push(root);
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), source);
  }
  const result = spawnSync(process.execPath, [script, root], { encoding: "utf8", timeout: 30_000 });
  return { code: result.status, stderr: result.stderr };
}

const clean = {
  "core/contract.ts": `export interface Contract { run(): void }\n`,
  "core/impl.ts": `import type { Contract } from "./contract.js";\nexport class Impl implements Contract { run(): void {} }\n`,
  "backends/remote.ts": `import type { Contract } from "../core/contract.js";\nexport const remote = (c: Contract) => c;\n`,
  // The composition points may import every folder, even one that imports them back.
  "cli/main.ts": `import { remote } from "../backends/remote.js";\nimport { Impl } from "../core/impl.js";\nremote(new Impl());\n`,
  "index.ts": `export { Impl } from "./core/impl.js";\nexport * from "./backends/remote.js";\n`,
  "backends/uses-cli.ts": `import "../cli/main.js";\n`,
  // Lazy imports, and imports in comments or strings, are not module-level imports.
  "core/lazy.ts": `// import "../backends/remote.js";\nexport const text = \`\nimport "../backends/remote.js";\n\`;\nexport const load = () => import("../backends/remote.js");\n`,
};

describe("check-cycles", () => {
  it("passes a tree without cycles", () => {
    expect(check(clean)).toMatchObject({ code: 0 });
  });

  it("fails on a module cycle made of type-only imports, and prints it", () => {
    const result = check({
      ...clean,
      "core/contract.ts": `import type { Impl } from "./impl.js";\nexport interface Contract { run(): Impl }\n`,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("module cycle: core/contract.ts -> core/impl.ts -> core/contract.ts");
  });

  it("fails on a cycle through an `export … from` spread over several lines", () => {
    const result = check({ ...clean, "core/impl.ts": `export {\n  Impl,\n} from "./impl.js";\n` });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("module cycle: core/impl.ts -> core/impl.ts");
  });

  it("fails on a cycle between top-level folders even when the files form no cycle", () => {
    const result = check({ ...clean, "core/helper.ts": `export { remote } from "../backends/remote.js";\n` });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("folder cycle: backends -> core -> backends");
    expect(result.stderr).toContain("core/helper.ts imports backends/remote.ts");
  });
});
