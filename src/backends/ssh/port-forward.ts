/**
 * URLs for ports of the ssh host: local forwards on the session's own master
 * connection (`ssh -O forward -L 127.0.0.1:LOCAL:localhost:PORT`), so no new
 * connection or login is made, and they end with the master when the session
 * closes. One forward per port, kept while its local listener exists (a lost
 * connection takes its forwards with it; the next call makes a new one).
 */

import { createServer } from "node:net";
import type { PortUrl } from "../../core/environment.js";
import { BackendUnavailableError } from "../../core/errors.js";
import { sshOptions, type SshTarget } from "./command.js";
import type { ExecResult } from "./exec.js";

/** Tries with a new local port when the one picked was taken in between. */
const ATTEMPTS = 3;

export class PortForwards {
  readonly #run: (args: string[]) => Promise<ExecResult>;
  readonly #forwards = new Map<number, number>();

  /** `run` runs the ssh client with these arguments (the master's control requests). */
  constructor(run: (args: string[]) => Promise<ExecResult>) {
    this.#run = run;
  }

  async url(target: SshTarget, port: number): Promise<PortUrl> {
    const known = this.#forwards.get(port);
    if (known !== undefined && !(await bindable(known))) return urlOf(known);
    let stderr = "";
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const local = await freePort();
      const result = await this.#run([
        ...sshOptions(target),
        "-O",
        "forward",
        "-L",
        `127.0.0.1:${local}:localhost:${port}`,
        target.host,
      ]);
      if (result.code === 0) {
        this.#forwards.set(port, local);
        return urlOf(local);
      }
      stderr = result.stderr.trim();
    }
    throw new BackendUnavailableError(`Could not forward port ${port} over the ssh connection: ${stderr}`, {
      backend: "ssh",
    });
  }

  /** The master went (the session closed): its forwards went with it. */
  forget(): void {
    this.#forwards.clear();
  }
}

const urlOf = (local: number): PortUrl => ({ url: `http://127.0.0.1:${local}`, headers: {} });

/** A port of 127.0.0.1 nobody listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** True when nothing listens on 127.0.0.1:port (a forward there is gone). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
