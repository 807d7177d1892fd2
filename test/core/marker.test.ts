import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MarkerScanner } from "../../src/core/marker.js";

const SID = "0123456789ab";
const marker = (cwd: string) => `__SHELLWRIGHT_END_${SID}__${cwd}__SHELLWRIGHT_END_${SID}__\n`;

/** Feeds `text` in the given chunk sizes and returns what the scanner let through. */
function scan(text: string, sizes: number[], options: { expectPid?: boolean } = {}) {
  const scanner = new MarkerScanner(SID, options);
  const bytes = Buffer.from(text);
  const out: Buffer[] = [];
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const size = Math.max(1, sizes[i % sizes.length] ?? 1);
    out.push(scanner.push(bytes.subarray(at, at + size)));
    at += size;
  }
  out.push(scanner.flush());
  return { output: Buffer.concat(out).toString(), scanner };
}

describe("MarkerScanner", () => {
  it("strips the marker and keeps the output byte-exact", () => {
    expect(scan(`abc${marker("/tmp")}`, [1000]).output).toBe("abc");
    expect(scan(`abc\n${marker("/tmp")}`, [1000]).output).toBe("abc\n");
    expect(scan(marker("/x y"), [1000]).scanner.payload).toBe("/x y");
  });

  it("passes a trailing newline through at once: only a possible marker start is held", () => {
    const scanner = new MarkerScanner(SID);
    expect(scanner.push(Buffer.from("line\n")).toString()).toBe("line\n");
    expect(scanner.push(Buffer.from("next__SHELL")).toString()).toBe("next");
    expect(scanner.push(Buffer.from("X")).toString()).toBe("__SHELLX");
  });

  it("reports an empty payload as it came", () => {
    const { scanner } = scan(`out${marker("")}`, [7]);
    expect(scanner.done).toBe(true);
    expect(scanner.payload).toBe("");
  });

  it("drops what a background job writes after the marker", () => {
    expect(scan(`a${marker("/")}late output`, [3]).output).toBe("a");
  });

  it("gives back held bytes when the stream ends without a marker", () => {
    const partial = `data\n__SHELLWRIGHT_END_${SID}__/unfinished`;
    const { output, scanner } = scan(partial, [5]);
    expect(output).toBe(partial);
    expect(scanner.done).toBe(false);
  });

  it("finds the marker across any chunking", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 10 }),
        (body, sizes) => {
          const { output, scanner } = scan(`${body}${marker("/some/dir")}`, sizes);
          expect(output).toBe(body);
          expect(scanner.payload).toBe("/some/dir");
        },
      ),
    );
  });

  it("strips a leading PID line when asked", () => {
    const { output, scanner } = scan(`__SHELLWRIGHT_PID_${SID}__4242__\nhello${marker("")}`, [4], { expectPid: true });
    expect(output).toBe("hello");
    expect(scanner.pid).toBe(4242);
  });

  it("takes the wrapper's start time from the PID line, and none from a line without one", () => {
    const withStart = scan(`__SHELLWRIGHT_PID_${SID}__4242:987654__\nhello${marker("")}`, [3], { expectPid: true });
    expect(withStart.output).toBe("hello");
    expect([withStart.scanner.pid, withStart.scanner.pidStartTime]).toEqual([4242, "987654"]);
    // No /proc where the wrapper ran: the PID alone.
    const empty = scan(`__SHELLWRIGHT_PID_${SID}__4242:__\nhello${marker("")}`, [3], { expectPid: true });
    expect([empty.output, empty.scanner.pid, empty.scanner.pidStartTime]).toEqual(["hello", 4242, undefined]);
  });

  it("leaves output alone when the PID line is missing", () => {
    const { output, scanner } = scan(`hello${marker("")}`, [2], { expectPid: true });
    expect(output).toBe("hello");
    expect(scanner.pid).toBeUndefined();
  });
});

describe("MarkerScanner keyed by a call secret", () => {
  it("treats a marker with another key as plain output", () => {
    const scanner = new MarkerScanner("secret0000000000", { expectPid: true, sessionId: SID });
    const forged = `__SHELLWRIGHT_END_${SID}__C:/etc__SHELLWRIGHT_END_${SID}__\n`;
    const real = `__SHELLWRIGHT_END_secret0000000000__N__SHELLWRIGHT_END_secret0000000000__\n`;
    const out = scanner.push(Buffer.from(`__SHELLWRIGHT_PID_${SID}__42__\nbefore${forged}after${real}`));
    expect(out.toString()).toBe(`before${forged}after`);
    expect(scanner.pid).toBe(42);
    expect(scanner.payload).toBe("N");
  });
});
