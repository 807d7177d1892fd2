/** src/http/loopback.ts: one answer to "is this host loopback?", whatever the spelling. */

import { describe, expect, it } from "vitest";
import { canonicalHost, isLoopbackHost, urlHost } from "../../src/http/loopback.js";

describe("isLoopbackHost", () => {
  it("takes ::1 with and without brackets, and in any IPv6 spelling", () => {
    for (const host of ["::1", "[::1]", "0:0:0:0:0:0:0:1", "[0::1]"]) expect(isLoopbackHost(host), host).toBe(true);
  });

  it("takes localhost (any case) and all of 127.0.0.0/8", () => {
    for (const host of ["localhost", "LocalHost", "127.0.0.1", "127.0.0.2", "127.255.255.254"])
      expect(isLoopbackHost(host), host).toBe(true);
  });

  it("refuses everything else, wildcard binds included", () => {
    for (const host of [
      "0.0.0.0",
      "::",
      "[::]",
      "10.0.0.1",
      "::2",
      "example.com",
      "127.example.com",
      "localhost.evil.example",
      "127.0.0.256",
      "",
    ]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});

describe("canonicalHost and urlHost", () => {
  it("spell ::1 and [::1] the same", () => {
    expect(canonicalHost("::1")).toBe("::1");
    expect(canonicalHost("[::1]")).toBe("::1");
    expect(canonicalHost("[0:0:0:0:0:0:0:1]")).toBe("::1");
    expect(urlHost("::1")).toBe("[::1]");
    expect(urlHost("[::1]")).toBe("[::1]");
  });

  it("leave IPv4 addresses and names as they are, lower-cased", () => {
    expect(urlHost("127.0.0.1")).toBe("127.0.0.1");
    expect(canonicalHost("LOCALHOST")).toBe("localhost");
    expect(urlHost("build-box.example")).toBe("build-box.example");
  });
});
