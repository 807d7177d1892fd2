/**
 * DNS-rebinding protection. A web page can point its own name at 127.0.0.1
 * and then send requests to a local server from the victim's browser; the
 * browser still sends the page's name in the Host header, so a server that
 * answers only to its own names cannot be reached that way.
 */

import { canonicalHost, isLoopbackHost } from "./loopback.js";

/**
 * A test for Host headers a server bound to `bindHost` answers to: on a
 * loopback address, any loopback name (a client may say localhost, 127.0.0.1
 * or [::1]); otherwise only the bound name itself. The port is not compared:
 * a rebinding page is given away by its name, and a forwarded port (ssh -L)
 * legitimately differs.
 */
export function hostHeaderCheck(bindHost: string): (header: string | undefined) => boolean {
  const bound = canonicalHost(bindHost);
  const loopback = isLoopbackHost(bound);
  return (header) => {
    const name = hostOf(header ?? "");
    if (name === undefined) return false;
    return loopback ? isLoopbackHost(name) : canonicalHost(name) === bound;
  };
}

/** The name in a Host header without its port; undefined when the header is not host[:port]. */
export function hostOf(header: string): string | undefined {
  if (header.startsWith("[")) return /^(\[[^\]]+\])(?::\d+)?$/.exec(header)?.[1];
  // Two colons or more: an IPv6 address without the brackets (and so without a port).
  if (header.split(":").length > 2) return header;
  return /^([^:]+)(?::\d+)?$/.exec(header)?.[1];
}
