/** The Engine API trace a caller asked for (DockerTransportOptions.trace), without the secrets an exec carries. */

import type { DockerCall } from "./engine.js";

/** The trace shows which variables an exec carried, never their values. */
export function redactingTrace(trace: (call: DockerCall) => void): (call: DockerCall) => void {
  return (call) => {
    if (
      call.via === "api" &&
      typeof call.body === "object" &&
      call.body !== null &&
      Array.isArray((call.body as { Env?: unknown }).Env)
    ) {
      const body = call.body as { Env: string[] };
      trace({ ...call, body: { ...body, Env: body.Env.map((entry) => `${entry.split("=")[0]}=…`) } });
    } else {
      trace(call);
    }
  };
}
