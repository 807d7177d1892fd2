/**
 * A unix-socket proxy in front of the Docker Engine that a test can cut: while
 * it is down, every connection open through it is destroyed and every new one
 * is closed as it arrives, as when dockerd restarts. Point the docker backend
 * at `socketPath` (its `socketPath` option; the CLI it runs then uses it too).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export class EngineProxy {
  readonly socketPath: string;
  readonly #dir: string;
  readonly #server: Server;
  readonly #open = new Set<Socket>();
  #down = false;
  /** Connections cut or refused so far. */
  cuts = 0;
  #armed: { pattern: RegExp; ms: number; fired: (outage: Promise<void>) => void } | undefined;
  #watched: { pattern: RegExp; seen: () => void } | undefined;

  private constructor(dir: string, server: Server) {
    this.#dir = dir;
    this.socketPath = join(dir, "docker.sock");
    this.#server = server;
  }

  static async start(engine = "/var/run/docker.sock"): Promise<EngineProxy> {
    const dir = mkdtempSync(join(tmpdir(), "sw-engine-proxy-"));
    // Half-open both ways: an exec's stdin ends with a half-close, and its output still comes back after it.
    const server = createServer({ allowHalfOpen: true }, (client) => proxy.#accept(client, engine));
    const proxy = new EngineProxy(dir, server);
    await new Promise<void>((resolve) => server.listen(proxy.socketPath, resolve));
    return proxy;
  }

  get down(): boolean {
    return this.#down;
  }

  /** Cuts the engine off: every open connection is destroyed, new ones are refused until up(). */
  cut(): void {
    this.#down = true;
    for (const socket of this.#open) socket.destroy();
    this.cuts += this.#open.size;
    this.#open.clear();
  }

  up(): void {
    this.#down = false;
  }

  /** Cut for `ms`, then back. */
  async outage(ms: number): Promise<void> {
    this.cut();
    await new Promise((resolve) => setTimeout(resolve, ms));
    this.up();
  }

  /**
   * Cuts the engine off for `ms` at the answer to the next request whose
   * request line (`POST /v1.43/containers/create`) matches `pattern`: the
   * engine has done what was asked, and the caller never hears. Resolves with
   * the outage (itself resolving when it is over) once it has begun.
   */
  cutAtAnswer(pattern: RegExp, ms: number): Promise<Promise<void>> {
    return new Promise((fired) => (this.#armed = { pattern, ms, fired }));
  }

  /** Resolves when a request whose request line matches `pattern` passes through (the engine is asked, not yet answered). */
  requestSeen(pattern: RegExp): Promise<void> {
    return new Promise((seen) => (this.#watched = { pattern, seen }));
  }

  /** Forgets an armed cutAtAnswer or requestSeen that never fired, so it cannot fire in a later case. */
  disarm(): void {
    this.#armed = undefined;
    this.#watched = undefined;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.#server.close(resolve));
    rmSync(this.#dir, { recursive: true, force: true });
  }

  #accept(client: Socket, engine: string): void {
    if (this.#down) {
      this.cuts++;
      client.destroy();
      return;
    }
    const upstream = connect({ path: engine, allowHalfOpen: true });
    for (const socket of [client, upstream]) {
      this.#open.add(socket);
      socket.on("error", () => undefined);
      socket.on("close", () => {
        this.#open.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    // The last request line sent on this connection, so an armed cut knows which answer it is.
    let request = "";
    client.on("data", (chunk: Buffer) => {
      const line = /^(GET|POST|PUT|DELETE|HEAD) \S+/m.exec(chunk.toString("latin1"));
      if (line !== null) {
        request = line[0];
        const watched = this.#watched;
        if (watched?.pattern.test(request) === true) {
          this.#watched = undefined;
          watched.seen();
        }
      }
      upstream.write(chunk);
    });
    client.on("end", () => upstream.end());
    upstream.on("data", (chunk: Buffer) => {
      const armed = this.#armed;
      if (armed !== undefined && armed.pattern.test(request)) {
        this.#armed = undefined;
        armed.fired(this.outage(armed.ms));
        return;
      }
      client.write(chunk);
    });
    upstream.on("end", () => client.end());
  }
}
