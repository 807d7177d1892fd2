import { describe, expect, it } from "vitest";
import { KeyedStderr } from "../../../src/backends/ssh/keyed-stderr.js";

const NONCE = "0123456789abcdef01234567";

function scan(chunks: Buffer[]): { passed: Buffer; lines: string[] } {
  const lines: string[] = [];
  const scanner = new KeyedStderr(NONCE, (kind, value) => lines.push(`${kind}:${value}`));
  const passed = Buffer.concat([...chunks.map((chunk) => scanner.push(chunk)), scanner.flush()]);
  return { passed, lines };
}

describe("the channel's stderr of a call that keeps stderr apart", () => {
  it("takes the keyed group and exit lines out at any split, passing the command's bytes on exactly", () => {
    // The command's bytes: invalid UTF-8, unkeyed look-alikes of both lines, one with another nonce.
    const own = Buffer.concat([
      Buffer.from("err\xff\n", "latin1"),
      Buffer.from(
        "__SHELLWRIGHT_GROUP_7__\n\n__SHELLWRIGHT_EXIT__0__\n__SHELLWRIGHT_EXIT_ffffffffffffffffffffffff_3__\n",
      ),
      Buffer.from("last"),
    ]);
    const wire = Buffer.concat([
      Buffer.from(`__SHELLWRIGHT_GROUP_${NONCE}_4242__\n`),
      own,
      Buffer.from(`\n__SHELLWRIGHT_EXIT_${NONCE}_9__\n`),
    ]);
    for (let cut = 0; cut <= wire.length; cut++) {
      const { passed, lines } = scan([wire.subarray(0, cut), wire.subarray(cut)]);
      expect(lines).toEqual(["group:4242", "exit:9"]);
      // Cut right after the exit line's leading newline (one printf, so rarely), that newline has gone out:
      // a lone trailing newline is never held back. The session's own end marker precedes it anyway.
      const expected =
        cut === wire.length - `__SHELLWRIGHT_EXIT_${NONCE}_9__\n`.length
          ? `${own.toString("latin1")}\n`
          : own.toString("latin1");
      expect(passed.toString("latin1")).toBe(expected);
    }
  });

  it("does not hold back a line that ends, nor lose a held tail that was not a keyed line", () => {
    const { passed, lines } = scan([Buffer.from("warning\n__SHELLWRIGHT_"), Buffer.from("NOT_OURS\n")]);
    expect(passed.toString()).toBe("warning\n__SHELLWRIGHT_NOT_OURS\n");
    expect(lines).toEqual([]);
    const scanner = new KeyedStderr(NONCE, () => undefined);
    expect(scanner.push(Buffer.from("progress 50%\n")).toString()).toBe("progress 50%\n");
  });
});
