/** `shellwright sessions [--json]` and `shellwright close NAME`. */

import { createEnvironment } from "../backends/index.js";
import { SessionNotFoundError } from "../core/errors.js";
import { parseArgs, UsageError } from "./args.js";
import { SessionStore } from "./session-store.js";

export async function list(args: string[]): Promise<number> {
  const parsed = parseArgs(args, [], ["json"]);
  if (parsed.positionals.length > 0) throw new UsageError("usage: shellwright sessions [--json]");
  const sessions = new SessionStore().list();
  if (parsed.flags.has("json")) {
    process.stdout.write(`${JSON.stringify(sessions)}\n`);
  } else if (sessions.length === 0) {
    process.stdout.write("no sessions\n");
  } else {
    for (const s of sessions) process.stdout.write(`${s.name}\t${s.backend}\t${s.state.cwd}\tlast used ${s.updatedAt}\n`);
  }
  return 0;
}

export async function close(args: string[]): Promise<number> {
  const parsed = parseArgs(args, [], []);
  const [name, ...rest] = parsed.positionals;
  if (name === undefined || rest.length > 0) throw new UsageError("usage: shellwright close NAME");
  const store = new SessionStore();
  const stored = store.load(name);
  if (stored === undefined) throw new SessionNotFoundError(name);
  const env = await createEnvironment({ backend: "local", stateDir: store.dir(name), resume: stored.state });
  await env.close();
  store.remove(name);
  process.stdout.write(`closed ${name}\n`);
  return 0;
}
