/**
 * One HTTP API `shellwright serve` speaks (apis.ts lists them). Apart from
 * apis.ts so that an API's own module can name it without an import cycle.
 */

import type { IncomingMessage, ServerResponse } from "node:http";

export interface ServedApi {
  /** Whether a request is this API's: from its method, path and headers only, before any authentication. */
  claims(req: IncomingMessage, pathname: string): boolean;
  /** Answers the request, authentication included; never throws. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Stops what it runs beside the registry's sessions (timers, open streams) when the server closes. */
  close?(): Promise<void>;
}
