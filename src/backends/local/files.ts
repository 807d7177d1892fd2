/**
 * The local backend's BackendFiles: the session's own files are on this
 * machine, so Node reads, renames and removes them directly (no process).
 */

import { readFileSync, renameSync, unlinkSync } from "node:fs";
import type { BackendFiles } from "../../core/transport.js";

export const localFiles: BackendFiles = {
  readText(path) {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
  },
  rename(from, to) {
    try {
      renameSync(from, to);
      return true;
    } catch {
      return false;
    }
  },
  remove(path) {
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
  },
};
