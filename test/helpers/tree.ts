/** A directory tree as plain data, to compare a workspace before and after (checkpoint tests). */

import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";

/** Every entry under `root`: its type, mode and contents or link target. */
export function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const key = rel === "" ? name : `${rel}/${name}`;
      const st = lstatSync(path);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[key] = `link -> ${readlinkSync(path)}`;
      else if (st.isDirectory()) {
        out[key] = `dir ${mode}`;
        walk(path, key);
      } else out[key] = `file ${mode} ${readFileSync(path, "utf8")}`;
    }
  };
  out["."] = `dir ${(lstatSync(root).mode & 0o7777).toString(8)}`;
  walk(root, "");
  return out;
}
