/**
 * The ssh backend's login origin (core/login-snapshots.ts): sessions share a
 * login snapshot only when everything that decides what the login sees is the
 * same. No connection: the origin is known before the session starts.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { normalizeSshConfig } from "../../../src/backends/ssh/config.js";
import { SshTransport } from "../../../src/backends/ssh/transport.js";

const origin = (raw: Record<string, unknown>): string | undefined =>
  new SshTransport(normalizeSshConfig({ host: "example.test", ...raw }, () => undefined)).loginOrigin;

describe("the ssh login origin", () => {
  // A key path must name a readable file (the config checks it); its content is never read here.
  const dir = mkdtempSync(join(tmpdir(), "sw-origin-"));
  const keyPath = join(dir, "id_test");
  writeFileSync(keyPath, "not a key\n", { mode: 0o600 });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is the same for the same host, user and env, and differs when any of them, the port or the key does", () => {
    const base = origin({ user: "a", env: { X: "1" } });
    expect(base).toBeDefined();
    expect(origin({ user: "a", env: { X: "1" } })).toBe(base);
    for (const other of [
      { user: "b", env: { X: "1" } },
      { user: "a", env: { X: "2" } },
      { user: "a" },
      { user: "a", env: { X: "1" }, host: "other.test" },
      { user: "a", env: { X: "1" }, port: 2222 },
      { user: "a", env: { X: "1" }, keyPath },
    ])
      expect(origin(other)).not.toBe(base);
  });

  it("holds none of the values it is made of", () => {
    expect(origin({ user: "a", env: { TOKEN: "s3cr3t-value" } })).not.toMatch(/s3cr3t|TOKEN/);
  });

  it("is none with reuseLoginSnapshot: false", () => {
    expect(origin({ reuseLoginSnapshot: false })).toBeUndefined();
  });
});
