/** The sandbox option's validation and path resolution, and the command lines built from it. */

import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bwrapArgs, enterArgs } from "../../../../src/backends/local/sandbox/bwrap-args.js";
import { DEFAULT_DENY_READ, normalizeSandbox, resolveSandbox } from "../../../../src/backends/local/sandbox/config.js";
import { checkSandboxSupport } from "../../../../src/backends/local/sandbox/preflight.js";
import { createEnvironment } from "../../../../src/index.js";

describe("normalizeSandbox", () => {
  it("is off for undefined and false, and the preset for true", () => {
    expect(normalizeSandbox(undefined)).toBeUndefined();
    expect(normalizeSandbox(false)).toBeUndefined();
    expect(normalizeSandbox(true)).toEqual({ writable: ["."], denyRead: [...DEFAULT_DENY_READ], network: "none" });
  });

  it("takes each field, with the preset's defaults for the others", () => {
    expect(normalizeSandbox({ network: { allow: ["Registry.npmjs.org", "localhost:8080"] } })).toEqual({
      writable: ["."],
      denyRead: [...DEFAULT_DENY_READ],
      network: {
        allow: [
          { host: "registry.npmjs.org", port: undefined },
          { host: "localhost", port: 8080 },
        ],
      },
    });
    expect(normalizeSandbox({ writable: ["a"], denyRead: [], network: "host" })).toEqual({
      writable: ["a"],
      denyRead: [],
      network: "host",
    });
  });

  it.each([
    [1, "sandbox", /sandbox must be true, false or an object, got 1/],
    [{ writeable: ["."] }, "sandbox.writeable", /Unknown sandbox option "writeable"/],
    [{ writable: "." }, "sandbox.writable", /sandbox.writable must be an array of paths, got "."/],
    [{ denyRead: [""] }, "sandbox.denyRead[0]", /must not be empty/],
    [{ network: "all" }, "sandbox.network", /"none", "host" or \{ allow: \[...\] \}, got "all"/],
    [
      { network: { allow: ["https://x.org"] } },
      "sandbox.network.allow[0]",
      /host name or host:port.*"https:\/\/x.org"/,
    ],
    [{ network: { allow: ["x.org:0"] } }, "sandbox.network.allow[0]", /got "x.org:0"/],
    [{ network: { deny: [] } }, "sandbox.network.deny", /Unknown sandbox.network option "deny"/],
  ])("refuses %j naming the option and the value", (value, option, message) => {
    expect(() => normalizeSandbox(value)).toThrow(message);
    try {
      normalizeSandbox(value);
    } catch (error) {
      expect((error as { option: string }).option).toBe(option);
    }
  });

  it("is refused by createEnvironment before anything starts", async () => {
    await expect(createEnvironment({ backend: "local", sandbox: { network: "everything" } as never })).rejects.toThrow(
      /sandbox.network/,
    );
  });
});

describe("resolveSandbox", () => {
  it("resolves ~ and relative paths against the session's cwd, and denies real paths that exist", () => {
    const root = mkdtempSync("/var/tmp/sw-resolve-");
    try {
      mkdirSync(join(root, "proj"));
      mkdirSync(join(root, "keys"));
      writeFileSync(join(root, "token"), "x");
      symlinkSync(join(root, "keys"), join(root, "keys-link"));
      const resolved = resolveSandbox(
        {
          writable: [".", ".."],
          denyRead: ["../keys-link", "../token", "../missing", "~/.nothing-here-xyz"],
          network: "none",
        },
        join(root, "proj"),
      );
      expect(resolved.writable).toEqual([join(root, "proj"), root]);
      expect(resolved.denyRead).toEqual([
        { path: join(root, "keys"), directory: true },
        { path: join(root, "token"), directory: false },
      ]);
      expect(resolveSandbox({ writable: ["~"], denyRead: [], network: "none" }, "/").writable).toEqual([homedir()]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("bwrap and nsenter command lines", () => {
  const sandbox = {
    writable: ["/w"],
    denyRead: [
      { path: "/w/.ssh", directory: true },
      { path: "/w/token", directory: false },
    ],
    network: "none" as const,
  };

  it("drops capabilities, blocks new user namespaces and denies after the writable binds", () => {
    const args = bwrapArgs({ sandbox, stateDir: "/dev/shm/s" });
    expect(args).toEqual(expect.arrayContaining(["--unshare-net", "--disable-userns", "--cap-drop", "ALL"]));
    const bind = args.indexOf("/w");
    expect(args.indexOf("/w/.ssh")).toBeGreaterThan(bind);
    expect(args.slice(args.indexOf("/dev/shm/s") - 1, args.indexOf("/dev/shm/s") + 2)).toEqual([
      "--bind",
      "/dev/shm/s",
      "/dev/shm/s",
    ]);
    expect(args.at(-1)).toBe("--");
    expect(bwrapArgs({ sandbox: { ...sandbox, network: "host" }, stateDir: "/s" })).not.toContain("--unshare-net");
  });

  it("binds a workspace read-only, never writable, and its layers dir after the state dir (overlay.ts mounts over it)", () => {
    const args = bwrapArgs({
      sandbox: { ...sandbox, writable: ["/w", "/w/ws"] },
      stateDir: "/dev/shm/s",
      workspace: { root: "/w/ws", layers: "/dev/shm/s/layers" },
    });
    const at = (...op: string[]): number => args.findIndex((_, i) => op.every((part, k) => args[i + k] === part));
    expect(at("--bind", "/w/ws")).toBe(-1);
    expect(at("--bind", "/w", "/w")).toBeLessThan(at("--ro-bind", "/w/ws", "/w/ws"));
    expect(at("--bind", "/dev/shm/s", "/dev/shm/s")).toBeLessThan(
      at("--bind", "/dev/shm/s/layers", "/dev/shm/s/layers"),
    );
  });

  it("covers the host's runtime dirs, binds back what the session needs over them, and seals them last", () => {
    const args = bwrapArgs({
      sandbox: { ...sandbox, writable: ["/", "/run/pg"] },
      stateDir: "/run/user/0/s",
      proxySocket: "/run/user/0/p/proxy.sock",
      hidden: ["/run"],
      bindBack: ["/run/systemd/resolve/stub-resolv.conf"],
    });
    const at = (...op: string[]): number => args.findIndex((_, i) => op.every((part, k) => args[i + k] === part));
    const cover = at("--tmpfs", "/run");
    // A writable dir around /run is bound before the cover (it would bring the sockets back), one inside after it.
    expect(at("--bind", "/", "/")).toBeLessThan(cover);
    for (const op of [
      ["--bind", "/run/pg"],
      ["--bind", "/run/user/0/s"],
      ["--ro-bind", "/run/user/0/p/proxy.sock"],
      ["--ro-bind", "/run/systemd/resolve/stub-resolv.conf"],
    ])
      expect(at(...op)).toBeGreaterThan(cover);
    expect(at("--remount-ro", "/run")).toBe(args.length - 5); // then only --info-fd 3 --
  });

  it("enters every namespace and drops every capability before the command", () => {
    const args = enterArgs({ nsenter: "/n", setpriv: "/s", initPid: 42, ownNetwork: true, root: true });
    expect(args.slice(0, 2)).toEqual(["/n", "--target=42"]);
    expect(args).toEqual(expect.arrayContaining(["--user", "--mount", "--pid", "--net", "--root"]));
    expect(args.slice(args.indexOf("/s"))).toEqual([
      "/s",
      "--bounding-set=-all",
      "--inh-caps=-all",
      "--ambient-caps=-all",
      "--no-new-privs",
      "--pdeathsig=KILL",
      "--",
    ]);
    expect(enterArgs({ nsenter: "/n", setpriv: "/s", initPid: 42, ownNetwork: false, root: false })).toEqual(
      expect.arrayContaining(["--user-parent"]),
    );
  });
});

describe.skipIf(process.platform !== "linux")("sandbox preflight", () => {
  it("says what to install when bubblewrap is missing", async () => {
    await expect(checkSandboxSupport("/nonexistent")).rejects.toThrow(
      /install bubblewrap \(Debian\/Ubuntu: apt-get install bubblewrap/,
    );
  });
});
