/**
 * native/sha256.c, which tags every fast-path frame, against the published
 * answers (FIPS 180-2's examples, RFC 4231's HMAC-SHA256 cases) and against
 * Node's own crypto on random messages, fed in pieces of every size so that
 * block boundaries fall everywhere. Compiled here with the machine's C
 * compiler (test/native/fixtures/sha256-kat.c drives it).
 */

import { spawnSync } from "node:child_process";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "sha256-kat-"));
const kat = join(dir, "kat");
const built = spawnSync(process.env.CC || "cc", [
  "-O2",
  "-Wall",
  "-Wextra",
  "-Werror",
  `-I${join(root, "native")}`,
  "-o",
  kat,
  join(root, "test/native/fixtures/sha256-kat.c"),
  join(root, "native/sha256.c"),
]);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], input: Buffer | string): string {
  const result = spawnSync(kat, args, { input, maxBuffer: 1 << 20 });
  if (result.status !== 0) throw new Error(`sha256-kat ${args.join(" ")} exited ${result.status}`);
  return result.stdout.toString().trim();
}

const sha = (input: Buffer | string, step = 64): string => run(["sha", String(step)], input);
const hmac = (key: Buffer, input: Buffer | string, step = 64): string =>
  run(["hmac", String(step), key.toString("hex")], input);

describe.skipIf(built.status !== 0)("sha256.c", () => {
  it("gives FIPS 180-2's answers", () => {
    expect(sha("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha("abc", 1)).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    // 56 bytes: the length no longer fits the first block's padding.
    expect(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 7)).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
    expect(sha("a".repeat(1_000_000), 997)).toBe("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  });

  it("gives RFC 4231's HMAC-SHA256 answers, a key longer than a block included", () => {
    expect(hmac(Buffer.alloc(20, 0x0b), "Hi There")).toBe(
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
    );
    expect(hmac(Buffer.from("Jefe"), "what do ya want for nothing?", 5)).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
    expect(hmac(Buffer.alloc(131, 0xaa), "Test Using Larger Than Block-Size Key - Hash Key First", 3)).toBe(
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
    );
  });

  it("agrees with Node's crypto on random messages, however they are cut", () => {
    for (const length of [0, 55, 56, 64, 65, 120, 4099]) {
      const message = randomBytes(length);
      const key = randomBytes(1 + (length % 150));
      for (const step of [1, 63, 64, 4096]) {
        expect(sha(message, step), `sha ${length}/${step}`).toBe(createHash("sha256").update(message).digest("hex"));
        expect(hmac(key, message, step), `hmac ${length}/${step}`).toBe(
          createHmac("sha256", key).update(message).digest("hex"),
        );
      }
    }
  });
});
