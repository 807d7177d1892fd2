/**
 * The domain allowlist end to end: an HTTP server on the host's loopback is
 * reachable through the sandbox's proxy only at the allowed host:port; another
 * port is refused by the proxy, and a direct connection has no route at all.
 */

import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../../../../src/index.js";
import { isAllowed } from "../../../../src/backends/local/sandbox/proxy.js";
import { HAVE_BWRAP, makeWorld, open, SKIP_REASON } from "./fixture.js";

/** bash's /dev/tcp to the proxy inside the sandbox: one raw request, the answer's first line. */
const viaProxy = (request: string): string =>
  `exec 3<>/dev/tcp/127.0.0.1/\${HTTP_PROXY##*:} && printf '${request}\\r\\nHost: x\\r\\n\\r\\n' >&3 && head -n 1 <&3`;

describe("isAllowed", () => {
  it("matches a host on any port, or host:port exactly, case-insensitively", () => {
    const allow = [
      { host: "registry.npmjs.org", port: undefined },
      { host: "localhost", port: 8080 },
    ];
    expect(isAllowed(allow, "Registry.NPMJS.org", 443)).toBe(true);
    expect(isAllowed(allow, "localhost", 8080)).toBe(true);
    expect(isAllowed(allow, "localhost", 8081)).toBe(false);
    expect(isAllowed(allow, "evil.npmjs.org", 443)).toBe(false);
  });
});

describe.skipIf(!HAVE_BWRAP)(`local sandbox proxy (${HAVE_BWRAP ? "bwrap" : SKIP_REASON})`, () => {
  const world = makeWorld();
  const servers: Server[] = [];
  const ports: number[] = [];
  let env: Environment;

  beforeAll(async () => {
    for (const name of ["allowed", "other"]) {
      const server = createServer((_req, res) => res.end(`hello from ${name}\n`));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      servers.push(server);
      ports.push((server.address() as { port: number }).port);
    }
    env = await open(world, true, { allow: [`localhost:${ports[0]}`] });
  });
  afterAll(async () => {
    await env?.close();
    for (const server of servers) server.close();
    world.cleanup();
  });

  it("sets the proxy variables for the session", async () => {
    expect((await env.execute('echo "$HTTP_PROXY $HTTPS_PROXY"')).output).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+ http:\/\/127\.0\.0\.1:\d+\n$/,
    );
  });

  it("forwards a plain HTTP request to the allowed host:port", async () => {
    const r = await env.execute(
      `exec 3<>/dev/tcp/127.0.0.1/\${HTTP_PROXY##*:} && printf 'GET http://localhost:${ports[0]}/ HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3`,
    );
    expect(r.output).toContain("hello from allowed");
  });

  it("tunnels a CONNECT to the allowed host:port", async () => {
    const r = await env.execute(viaProxy(`CONNECT localhost:${ports[0]} HTTP/1.1`));
    expect(r.output).toMatch(/^HTTP\/1\.1 200/);
  });

  it("refuses another port of the same host", async () => {
    expect((await env.execute(viaProxy(`CONNECT localhost:${ports[1]} HTTP/1.1`))).output).toMatch(/^HTTP\/1\.1 403/);
    expect((await env.execute(viaProxy(`GET http://localhost:${ports[1]}/ HTTP/1.0`))).output).toMatch(
      /^HTTP\/1\.1 403/,
    );
  });

  it("refuses a name that is not on the list", async () => {
    expect((await env.execute(viaProxy("CONNECT example.com:443 HTTP/1.1"))).output).toMatch(/^HTTP\/1\.1 403/);
  });

  it("has no direct route to the host's loopback", async () => {
    const r = await env.execute(`exec 3<>/dev/tcp/127.0.0.1/${ports[0]} && echo CONNECTED`);
    expect(r.output).not.toContain("CONNECTED");
  });
});
