/**
 * Which host names mean this machine's loopback interface. Both servers ask
 * before serving without a token, and the Host-header check asks too; one
 * answer, so `::1`, `[::1]` and `0:0:0:0:0:0:0:1` (or 127.0.0.2) are treated
 * the same everywhere.
 */

import { isIPv4, isIPv6 } from "node:net";

/**
 * One spelling per host: without IPv6 brackets, lower-cased, IPv6 in its
 * shortest form. Names that are not addresses are only lower-cased (DNS names
 * ignore case).
 */
export function canonicalHost(host: string): string {
  const bare = (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host).toLowerCase();
  // The WHATWG URL parser already knows how to shorten an IPv6 address.
  return isIPv6(bare) ? new URL(`http://[${bare}]/`).hostname.slice(1, -1) : bare;
}

export function isLoopbackHost(host: string): boolean {
  const name = canonicalHost(host);
  if (name === "localhost" || name === "::1") return true;
  return isIPv4(name) && name.startsWith("127.");
}

/** The host as it goes into a URL or a Host header: IPv6 in brackets. */
export function urlHost(host: string): string {
  const name = canonicalHost(host);
  return name.includes(":") ? `[${name}]` : name;
}
