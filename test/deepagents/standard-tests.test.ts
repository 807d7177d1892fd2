/**
 * The vendored Sandbox Standard Tests are LangChain's, unmodified; they run
 * against ShellwrightSandbox on local here, on docker and ssh in the files
 * beside this one.
 */

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { standardTestsOn, VENDOR } from "./standard-suite.js";

describe("the vendored Sandbox Standard Tests", () => {
  it("are unmodified: every file has the SHA-256 its PROVENANCE.md lists", () => {
    const listed = readFileSync(new URL("PROVENANCE.md", VENDOR), "utf8").matchAll(/^([0-9a-f]{64}) {2}(\S+)$/gm);
    const files = [...listed].map(([, hash, file]) => ({ file, hash }));
    expect(files.map((f) => f.file)).toEqual(
      expect.arrayContaining(["LICENSE", "src/sandbox.ts", "src/tests/edit.ts"]),
    );
    for (const { file, hash } of files) {
      expect(
        createHash("sha256")
          .update(readFileSync(new URL(file!, VENDOR)))
          .digest("hex"),
        file,
      ).toBe(hash);
    }
  });
});

standardTestsOn("local");
