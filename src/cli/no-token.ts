/**
 * The one refusal of `serve` and `mcp --http` when no token is set, in the
 * words a user of the command line acts on: the variable, `--token-file`,
 * `--insecure-no-auth` and `--host`, never the library's option names.
 */

import { isLoopbackHost } from "../http/loopback.js";
import { UsageError } from "./args.js";

export function noTokenCheck(given: { insecureNoAuth: boolean; host: string; envVar: string }): void {
  if (!given.insecureNoAuth)
    throw new UsageError(
      `no token: set $${given.envVar} or pass --token-file PATH (a file of mode 600), or --insecure-no-auth on a loopback --host`,
    );
  if (!isLoopbackHost(given.host))
    throw new UsageError(
      `--insecure-no-auth is allowed only on a loopback --host (127.0.0.1, ::1, localhost), not ${JSON.stringify(given.host)}; set $${given.envVar} or pass --token-file PATH`,
    );
}
