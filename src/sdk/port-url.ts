/**
 * `portUrl(env, port)`: where this program reaches a port a command in the
 * session listens on. The backend decides how (each declares it on its
 * transport): the local loopback, a docker port published on 127.0.0.1, a
 * local forward on the ssh master, a Modal tunnel, a Daytona preview link.
 * Where there is none, an UnsupportedError says why and what would give one.
 */

import { checkPort, type Environment, type PortUrl } from "../core/environment.js";
import { UnsupportedError } from "../core/errors.js";

export type { PortUrl };

export async function portUrl(env: Environment, port: number): Promise<PortUrl> {
  checkPort(port);
  if (typeof env.portUrl !== "function")
    throw new UnsupportedError(`This environment (${env.backend}) gives no URL for a port`, { backend: env.backend });
  return env.portUrl(port);
}
