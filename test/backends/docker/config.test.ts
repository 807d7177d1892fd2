/**
 * The docker backend's option validation and `docker run` arguments: pure,
 * so these run everywhere (the engine tests are in docker.test.ts).
 */

import { describe, expect, it } from "vitest";
import { createEnvironment, InvalidOptionError } from "../../../src/index.js";
import { normalizeDockerConfig, type DockerTransportOptions } from "../../../src/backends/docker/config.js";
import { dockerRunArgs } from "../../../src/backends/docker/run-args.js";
import { MultiplexDecoder } from "../../../src/backends/docker/engine.js";
import { ExitLineScanner } from "../../../src/backends/docker/exec.js";
import { ownerAliveHere } from "../../../src/backends/docker/containers.js";
import { hostname } from "node:os";

const base = { image: "img:1" };
const noWarnings = (message: string): void => {
  throw new Error(`unexpected warning: ${message}`);
};
const normalize = (raw: Record<string, unknown>, warn = noWarnings): DockerTransportOptions =>
  normalizeDockerConfig(raw, warn, () => "/host/cwd");
const argsFor = (raw: Record<string, unknown>, warn = noWarnings): string[] =>
  dockerRunArgs(normalize({ ...base, ...raw }, warn), "c1");

/** The value after each occurrence of a flag. */
const values = (args: string[], flag: string): string[] =>
  args.flatMap((arg, i) => (arg === flag ? [args[i + 1]!] : []));

describe("docker options", () => {
  it("applies the secure defaults", () => {
    const args = argsFor({});
    expect(args.slice(0, 4)).toEqual(["run", "-d", "--name", "c1"]);
    expect(args).toContain("--init");
    expect(values(args, "--cap-drop")).toEqual(["ALL"]);
    expect(values(args, "--cap-add")).toEqual(["DAC_OVERRIDE", "CHOWN", "FOWNER", "SETUID", "SETGID"]);
    expect(values(args, "--security-opt")).toEqual(["no-new-privileges"]);
    expect(values(args, "--pids-limit")).toEqual(["256"]);
    expect(values(args, "--label")).toEqual(
      expect.arrayContaining(["shellwright=1", "shellwright.keep=0", `shellwright.owner=${hostname()}/${process.pid}`]),
    );
    expect(args).not.toContain("--network");
    expect(args.slice(-3)).toEqual(["img:1", "sleep", "infinity"]);
  });

  it("maps limits, network, user, mounts and extra args", () => {
    const args = argsFor({
      cpus: 1.5,
      memoryMiB: 512,
      diskMiB: 2048,
      pidsLimit: 64,
      network: false,
      runAsHostUser: true,
      mountCwd: true,
      volumes: ["/data:/data:ro"],
      extraArgs: ["--hostname", "box"],
      labels: { team: "a" },
      keepContainer: true,
    });
    expect(values(args, "--cpus")).toEqual(["1.5"]);
    expect(values(args, "--memory")).toEqual(["512m"]);
    expect(values(args, "--storage-opt")).toEqual(["size=2048m"]);
    expect(values(args, "--pids-limit")).toEqual(["64"]);
    expect(values(args, "--network")).toEqual(["none"]);
    expect(values(args, "--user")).toEqual([`${process.getuid!()}:${process.getgid!()}`]);
    // No SETUID/SETGID for a host user: it has no business switching users.
    expect(values(args, "--cap-add")).toEqual(["DAC_OVERRIDE", "CHOWN", "FOWNER"]);
    expect(values(args, "-v")).toEqual(["/host/cwd:/workspace", "/data:/data:ro"]);
    expect(values(args, "--label")).toEqual(expect.arrayContaining(["team=a", "shellwright.keep=1"]));
    // Extra args come last before the image, so they can override what came before.
    expect(args.slice(-5)).toEqual(["--hostname", "box", "img:1", "sleep", "infinity"]);
  });

  it("publishes the ports named on 127.0.0.1 only, and refuses them without a network or out of range", () => {
    expect(values(argsFor({ ports: [8080, 3000, 8080] }), "-p")).toEqual(["127.0.0.1::8080", "127.0.0.1::3000"]);
    expect(values(argsFor({}), "-p")).toEqual([]);
    expect(() => argsFor({ ports: [8080], network: false })).toThrow(/ports needs a network/);
    expect(() => argsFor({ ports: [0] })).toThrow(/ports entries must be integers from 1 to 65535, got 0/);
    expect(() => argsFor({ ports: 8080 })).toThrow(/ports must be an array of port numbers, got 8080/);
  });

  it.each([
    { option: "memoryMb", flag: "--memory", wanted: "512m", warning: /memoryMb is deprecated; use memoryMiB/ },
    { option: "diskMb", flag: "--storage-opt", wanted: "size=512m", warning: /diskMb is deprecated; use diskMiB/ },
  ])(
    "still takes the deprecated $option, as the same number of MiB, with one warning",
    ({ option, flag, wanted, warning }) => {
      const warnings: string[] = [];
      expect(
        values(
          argsFor({ [option]: 512 }, (message) => warnings.push(message)),
          flag,
        ),
      ).toEqual([wanted]);
      expect(warnings).toEqual([expect.stringMatching(warning)]);
    },
  );

  it("can turn the hardening off explicitly", () => {
    const args = argsFor({ dropCapabilities: false, capAdd: [], noNewPrivileges: false, init: false });
    expect(args).not.toContain("--cap-drop");
    expect(args).not.toContain("--cap-add");
    expect(args).not.toContain("--security-opt");
    expect(args).not.toContain("--init");
  });

  it("keeps a named container by default and removes an anonymous one", () => {
    expect(normalize({ ...base }).keepContainer).toBe(false);
    expect(normalize({ ...base, containerName: "mine" }).keepContainer).toBe(true);
    expect(normalize({ ...base, containerName: "mine", keepContainer: false }).keepContainer).toBe(false);
  });

  it.each([
    [{}, "image", /needs an image/],
    [{ image: "a b" }, "image", /image reference/],
    [{ ...base, volumes: ["nocolon"] }, "volumes", /host:\/container/],
    [{ ...base, volumes: "/a:/b" }, "volumes", /array of strings/],
    [{ ...base, forwardEnv: ["BAD-NAME"] }, "forwardEnv", /"BAD-NAME"/],
    [{ ...base, capAdd: ["net_admin"] }, "capAdd", /"net_admin"/],
    [{ ...base, memoryMiB: -1 }, "memoryMiB", /positive integer, got -1/],
    [{ ...base, memoryMb: -1 }, "memoryMb", /positive integer, got -1/],
    [{ ...base, memoryMiB: 512, memoryMb: 512 }, "memoryMb", /Pass memoryMiB or memoryMb, not both/],
    [{ ...base, diskMiB: 0 }, "diskMiB", /positive integer, got 0/],
    [{ ...base, diskMiB: 512, diskMb: 512 }, "diskMb", /Pass diskMiB or diskMb, not both/],
    [{ ...base, cpus: "2" }, "cpus", /positive number, got "2"/],
    [{ ...base, pidsLimit: 1.5 }, "pidsLimit", /got 1.5/],
    [{ ...base, network: "off" }, "network", /boolean, got "off"/],
    [{ ...base, mountCwd: "relative/dir" }, "mountCwd", /absolute/],
    [{ ...base, containerName: "bad name" }, "containerName", /"bad name"/],
    [{ ...base, labels: { "shellwright.keep": "1" } }, "labels", /set by the backend/],
    [{ ...base, env: { A: 1 } }, "env.A", /string/],
    [{ ...base, trace: "yes" }, "trace", /function/],
  ])("rejects %j naming %s", (raw, option, message) => {
    let error: unknown;
    try {
      normalize(raw as Record<string, unknown>, () => undefined);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe(option);
    expect((error as Error).message).toMatch(message);
  });

  it("rejects unknown and removed options before touching the engine", async () => {
    await expect(createEnvironment({ backend: "docker", image: "x", imagee: "y" } as never)).rejects.toThrow(
      /Unknown docker backend option "imagee"/,
    );
    await expect(createEnvironment({ backend: "docker", image: "x", persistent: true } as never)).rejects.toThrow(
      /persistent/,
    );
  });
});

describe("engine stream frames", () => {
  it("splits multiplexed frames across any chunking, in order", () => {
    const frame = (stream: number, text: string): Buffer => {
      const payload = Buffer.from(text);
      const header = Buffer.alloc(8);
      header[0] = stream;
      header.writeUInt32BE(payload.length, 4);
      return Buffer.concat([header, payload]);
    };
    const wire = Buffer.concat([frame(1, "out1 "), frame(2, "err "), frame(1, ""), frame(1, "out2")]);
    for (let cut = 0; cut <= wire.length; cut++) {
      const decoder = new MultiplexDecoder();
      const frames = [...decoder.push(wire.subarray(0, cut)), ...decoder.push(wire.subarray(cut))];
      expect(frames.map((f) => `${f.stream}:${f.payload.toString()}`)).toEqual(["1:out1 ", "2:err ", "1:out2"]);
    }
  });
});

/** `wire` fed to a scanner in two pieces, cut at every offset: what each cut passed on, and the code it found. */
function everySplit(wire: Buffer, nonce?: string): { cut: number; passed: Buffer; code: number | undefined }[] {
  const splits = [];
  for (let cut = 0; cut <= wire.length; cut++) {
    const scanner = new ExitLineScanner(nonce);
    const passed = Buffer.concat([
      scanner.push(wire.subarray(0, cut)),
      scanner.push(wire.subarray(cut)),
      scanner.flush(),
    ]);
    splits.push({ cut, passed, code: scanner.code });
  }
  return splits;
}

describe("exit line on stderr", () => {
  it("finds and strips the exit line across any split, passing other bytes on exactly", () => {
    const other = Buffer.from([0x62, 0x61, 0x73, 0x68, 0x3a, 0xff, 0x0a, 0x5f, 0x5f]); // "bash:\xff\n__"
    const wire = Buffer.concat([other, Buffer.from("\n__SHELLWRIGHT_EXIT__42__\n")]);
    for (const { cut, passed, code } of everySplit(wire)) {
      expect(code).toBe(42);
      // Cut right after the line's leading newline, that newline has already gone out.
      const expected = cut === other.length + 1 ? Buffer.concat([other, Buffer.from("\n")]) : other;
      expect(passed.equals(expected)).toBe(true);
    }
  });

  it("keyed (stderr apart): only the line with the call's nonce ends it, a look-alike is the command's text", () => {
    const nonce = "00112233445566778899aabb";
    const own = Buffer.from("\n__SHELLWRIGHT_EXIT__0__\n__SHELLWRIGHT_EXIT_ffffffffffffffffffffffff_1__\nerr\n");
    const wire = Buffer.concat([own, Buffer.from(`\n__SHELLWRIGHT_EXIT_${nonce}_42__\n`)]);
    for (const { cut, passed, code } of everySplit(wire, nonce)) {
      expect(code).toBe(42);
      const expected = cut === own.length + 1 ? Buffer.concat([own, Buffer.from("\n")]) : own;
      expect(passed.toString()).toBe(expected.toString());
    }
  });

  it("does not hold back a plain newline", () => {
    const scanner = new ExitLineScanner();
    expect(scanner.push(Buffer.from("error line\n")).toString()).toBe("error line\n");
  });

  it("gives back a held tail that turned out not to be the exit line", () => {
    const scanner = new ExitLineScanner();
    const passed = Buffer.concat([
      scanner.push(Buffer.from("x\n__SHELLWRIGHT_EX")),
      scanner.push(Buffer.from("TRA\n")),
      scanner.flush(),
    ]);
    expect(passed.toString()).toBe("x\n__SHELLWRIGHT_EXTRA\n");
    expect(scanner.code).toBeUndefined();
  });
});

describe("container owners", () => {
  it("counts this process alive, a finished one dead, and other hosts alive", () => {
    expect(ownerAliveHere(`${hostname()}/${process.pid}`)).toBe(true);
    expect(ownerAliveHere(`${hostname()}/999999999`)).toBe(false);
    expect(ownerAliveHere("some-other-host/1")).toBe(true);
  });
});
