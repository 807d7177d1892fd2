/**
 * E2B's own SDK tests (test/vendor/e2b/, run by vitest beside this file) are
 * E2B's, unmodified: each has the SHA-256 its PROVENANCE.md lists, and every
 * other file there is one of the few Shellwright's own. The tests skipped by
 * name there name tests that exist, so a skip cannot outlive its test.
 */

import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { HOME_BOUND, SKIPPED } from "../../vendor/e2b/tests/skips.js";

const VENDOR = new URL("../../vendor/e2b/", import.meta.url);
const read = (file: string): Buffer => readFileSync(new URL(file, VENDOR));

/** Shellwright's own files in test/vendor/e2b/ (PROVENANCE.md says what each is). */
const OURS = [
  "PROVENANCE.md",
  "src/errors.ts",
  "src/index.ts",
  "src/sandbox/filesystem/index.ts",
  "tests/home-lock.ts",
  "tests/setup.ts",
  "tests/skips.ts",
];

function listed(): { file: string; hash: string }[] {
  const lines = read("PROVENANCE.md")
    .toString("utf8")
    .matchAll(/^([0-9a-f]{64}) {2}(\S+)$/gm);
  return [...lines].map(([, hash, file]) => ({ file: file!, hash: hash! }));
}

it("every vendored E2B file is unmodified, and every file there is listed or Shellwright's own", () => {
  const files = listed();
  expect(files.map((f) => f.file)).toEqual(
    expect.arrayContaining(["LICENSE", "tests/sandbox/commands/run.test.ts", "tests/sandbox/files/write.test.ts"]),
  );
  for (const { file, hash } of files) expect(createHash("sha256").update(read(file)).digest("hex"), file).toBe(hash);
  const root = fileURLToPath(VENDOR);
  const onDisk = readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
  expect(onDisk).toEqual([...files.map((f) => f.file), ...OURS].sort());
});

it("each test skipped by name is a test of its vendored, listed file", () => {
  const vendored = new Set(listed().map((f) => f.file));
  for (const file of [...Object.keys(SKIPPED), ...HOME_BOUND]) expect(vendored, file).toContain(`tests/${file}`);
  for (const [file, tests] of Object.entries(SKIPPED)) {
    const source = read(`tests/${file}`).toString("utf8");
    for (const name of Object.keys(tests)) expect(source, `${file}: ${name}`).toContain(`'${name}'`);
  }
  for (const file of HOME_BOUND) expect(read(`tests/${file}`).toString("utf8"), file).toContain("/home/user");
});
