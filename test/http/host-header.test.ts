/** src/http/host-header.ts: the Host headers a server answers to (DNS-rebinding protection). */

import { describe, expect, it } from "vitest";
import { hostHeaderCheck, hostOf } from "../../src/http/host-header.js";

describe("hostOf", () => {
  it("takes the name off host[:port], IPv6 in brackets or bare", () => {
    for (const [given, wanted] of [
      ["localhost:8808", "localhost"],
      ["localhost", "localhost"],
      ["[::1]:8808", "[::1]"],
      ["[::1]", "[::1]"],
      ["::1", "::1"],
    ] as const)
      expect(hostOf(given), given).toBe(wanted);
  });

  it("refuses what is not host[:port]", () => {
    for (const header of ["", "localhost:", "localhost:http", "[::1]x", "[::1]:", "[::1"])
      expect(hostOf(header), header).toBeUndefined();
  });
});

describe("hostHeaderCheck", () => {
  for (const bind of ["127.0.0.1", "localhost", "::1", "[::1]"]) {
    it(`bound to ${bind}: every loopback name, on any port, and nothing else`, () => {
      const allowed = hostHeaderCheck(bind);
      for (const header of ["127.0.0.1:8808", "localhost:1", "LOCALHOST", "[::1]:8808", "[::1]", "::1", "127.0.0.2"])
        expect(allowed(header), header).toBe(true);
      for (const header of [
        undefined,
        "",
        "evil.example:8808",
        "evil.example",
        "127.0.0.1.nip.io",
        "0.0.0.0:8808",
        "[::]:8808",
      ])
        expect(allowed(header), String(header)).toBe(false);
    });
  }

  it("bound elsewhere: only the bound name", () => {
    const allowed = hostHeaderCheck("192.168.1.5");
    for (const [given, wanted] of [
      ["192.168.1.5:8808", true],
      ["192.168.1.5", true],
      ["localhost:8808", false],
      ["evil.example:8808", false],
    ] as const)
      expect(allowed(given), given).toBe(wanted);
    const v6 = hostHeaderCheck("fd00::5");
    expect(v6("[fd00:0::5]:80")).toBe(true);
    expect(v6("[fd00::6]:80")).toBe(false);
  });
});
