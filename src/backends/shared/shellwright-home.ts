/**
 * Where Shellwright keeps what outlives a process: named CLI sessions (their
 * config, which may hold a gateway token, and a local session's snapshot).
 * Here rather than in the CLI because the local sandbox hides it too.
 */

import { homedir } from "node:os";
import { join } from "node:path";

export function shellwrightHome(): string {
  return process.env.SHELLWRIGHT_HOME || join(homedir(), ".shellwright");
}
