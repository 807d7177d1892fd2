/** A host directory for the files of a test file (or describe block): made before its tests, removed after them. */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { opened } from "./session.js";

export interface ScratchDir {
  /** The directory's path, once the tests run. */
  readonly path: string;
}

export function useScratchDir(prefix: string): ScratchDir {
  let path: string | undefined;
  beforeAll(() => {
    path = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(() => {
    if (path !== undefined) rmSync(path, { recursive: true, force: true });
  });
  return {
    get path(): string {
      return opened(path, "the scratch directory");
    },
  };
}
