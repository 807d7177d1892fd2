#!/usr/bin/env node
// Checks (or with --write, applies) the C style of native/ and the C test
// fixtures: clang-format with the repository's .clang-format, from the pinned
// npm package (no system install needed). Its bundled binary exists for
// linux-x64, macOS and Windows; elsewhere this says so and passes.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const write = process.argv.includes("--write");
const files = ["native", "test/native/fixtures"].flatMap((dir) =>
  readdirSync(join(root, dir))
    .filter((name) => /\.[ch]$/.test(name))
    .map((name) => join(dir, name)),
);

let binary;
try {
  binary = createRequire(import.meta.url)("clang-format").getNativeBinary();
} catch (error) {
  console.log(`check-c-format: skipped, no clang-format binary for this platform (${error.message.split("\n")[0]})`);
  process.exit(0);
}
const args = ["--style=file", ...(write ? ["-i"] : ["--dry-run", "--Werror"]), ...files];
const result = spawnSync(binary, args, { cwd: root, stdio: "inherit" });
if (result.status !== 0) {
  if (!write) console.error("check-c-format: run `npm run format` to apply the C style");
  process.exit(result.status ?? 1);
}
console.log(`check-c-format: ${files.length} C files ${write ? "formatted" : "in style"}`);
