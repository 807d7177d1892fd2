/**
 * The inside half of the allowlist: a TCP listener on the sandbox's own
 * loopback that forwards each connection to the host proxy's unix socket.
 * HTTP clients only speak to a proxy over TCP, and the sandbox's network
 * namespace has nothing but a loopback, so this bridge is the one way out.
 *
 * It runs as the long-lived sandbox's init command, with this process's own
 * node binary (visible read-only inside), so it needs no package beyond
 * bubblewrap. It prints "ready" once it listens.
 */

/** The proxy's address inside the sandbox (its own network namespace, so no port clash). */
export const BRIDGE_PORT = 3128;

const SOURCE = `
const net = require("node:net");
const [socketPath, port] = process.argv.slice(-2);
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  client.pipe(upstream).pipe(client);
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
});
server.listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\\n"));
`;

/** The init command for bwrap. */
export function bridgeCommand(socketPath: string): string[] {
  return [process.execPath, "-e", SOURCE, "--", socketPath, String(BRIDGE_PORT)];
}
