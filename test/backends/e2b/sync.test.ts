/**
 * The e2b backend's file sync (`sync`), through E2B's real SDK against `serve --api e2b` on loopback: files and a
 * directory reach the sandbox byte-exact with their modes, a change
 * is carried over before the next command, and a file removed here is removed there.
 */

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, type Gateway } from "../../../src/index.js";
import { startTestGateway, TOKEN } from "../../gateway/helpers.js";

let gateway: Gateway;
const here = mkdtempSync(join(tmpdir(), "sw-e2b-sync-here-"));
const there = mkdtempSync(join(tmpdir(), "sw-e2b-sync-there-"));

beforeAll(async () => {
  gateway = await startTestGateway({ apis: ["e2b"], cwd: there });
});
afterAll(async () => {
  await gateway?.close();
  rmSync(here, { recursive: true, force: true });
  rmSync(there, { recursive: true, force: true });
});

describe("e2b backend: file sync", () => {
  it("mirrors files and a directory before commands, and carries changes and removals over", async () => {
    const secret = join(here, "token");
    writeFileSync(secret, Buffer.from([0, 1, 0xff, 0xfe, 10]));
    const tree = join(here, "tree");
    mkdirSync(join(tree, "sub"), { recursive: true });
    writeFileSync(join(tree, "a.txt"), "alpha\n");
    writeFileSync(join(tree, "sub", "b.bin"), Buffer.alloc(200_000, 7));
    const env = await createEnvironment({
      backend: "e2b",
      apiKey: TOKEN,
      apiUrl: gateway.url,
      sandboxUrl: gateway.url,
      cwd: there,
      sync: {
        files: [{ local: secret, remote: `${there}/creds/token` }],
        directories: [{ local: tree, remote: `${there}/tree` }],
        intervalMs: 1,
      },
    });
    try {
      expect((await env.execute("cat tree/a.txt; wc -c < tree/sub/b.bin")).output).toBe("alpha\n200000\n");
      expect(readFileSync(join(there, "creds", "token"))).toEqual(Buffer.from([0, 1, 0xff, 0xfe, 10]));
      expect(statSync(join(there, "creds", "token")).mode & 0o777).toBe(0o600);

      writeFileSync(join(tree, "a.txt"), "changed\n");
      rmSync(join(tree, "sub", "b.bin"));
      expect((await env.execute("cat tree/a.txt; ls tree/sub | wc -l")).output).toBe("changed\n0\n");
      expect(existsSync(join(there, "tree", "sub", "b.bin"))).toBe(false);
    } finally {
      await env.close();
    }
  });
});
