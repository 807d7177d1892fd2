/**
 * E2B's own SDK tests (test/vendor/e2b/, run by vitest beside this file) are
 * E2B's, unmodified: each has the SHA-256 its PROVENANCE.md lists.
 */

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";

const VENDOR = new URL("../../vendor/e2b/", import.meta.url);

it("the vendored E2B tests are unmodified", () => {
  const listed = readFileSync(new URL("PROVENANCE.md", VENDOR), "utf8").matchAll(/^([0-9a-f]{64}) {2}(\S+)$/gm);
  const files = [...listed].map(([, hash, file]) => ({ file: file!, hash }));
  expect(files.map((f) => f.file)).toEqual(
    expect.arrayContaining(["LICENSE", "tests/sandbox/commands/run.test.ts", "tests/sandbox/pty/resize.test.ts"]),
  );
  for (const { file, hash } of files)
    expect(
      createHash("sha256")
        .update(readFileSync(new URL(file, VENDOR)))
        .digest("hex"),
      file,
    ).toBe(hash);
});
