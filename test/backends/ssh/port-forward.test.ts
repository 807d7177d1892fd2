/**
 * A URL for a port of the ssh host (src/backends/ssh/port-forward.ts): a
 * local forward on the session's master, gone once the session closes.
 * Against the real sshd on loopback (SHELLWRIGHT_TEST_SSH=1).
 */

import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { createEnvironment, portUrl, spawn } from "../../../src/index.js";
import { sshTestConfig, sshTestEnabled } from "./ssh-env.js";

/** True when something accepts a connection on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

describe.skipIf(!sshTestEnabled)("ssh port forwards", () => {
  it("forwards over the session's master and closes the forward with the session", async () => {
    const env = await createEnvironment(sshTestConfig());
    const remote = 20000 + ((process.pid + 7) % 25000);
    const server = await spawn(env, `exec python3 -u -m http.server ${remote} --bind 127.0.0.1`, { cwd: "/" });
    for await (const text of server.output()) if (text.includes("Serving HTTP")) break;
    const { url } = await portUrl(env, remote);
    const local = Number(new URL(url).port);
    expect(local).not.toBe(remote);
    expect((await fetch(url)).status).toBe(200);
    await env.close();
    expect(await listening(local)).toBe(false);
  });
});
