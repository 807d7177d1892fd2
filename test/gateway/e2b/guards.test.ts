/**
 * What serve --api e2b must hold against its own client, through the real
 * SDK: the gateway's token never comes back out of a command, a cwd stays
 * under --allow-root, stdin and PTY processes count against the long-lived
 * bound, and bad sizes and names are refused by name.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox, type CommandHandle, type FilesystemEvent, type SandboxOpts } from "e2b";
import type { Gateway } from "../../../src/index.js";
import { startTestGateway, TOKEN } from "../helpers.js";
import { alive, eventually } from "../../helpers/processes.js";

let gateway: Gateway;
let opts: SandboxOpts;
let sandbox: Sandbox;

beforeAll(async () => {
  gateway = await startTestGateway({ apis: ["e2b"], cwd: "/tmp", allowedRoots: ["/tmp"], maxLongLivedPerSession: 2 });
  opts = { apiKey: TOKEN, apiUrl: gateway.url, sandboxUrl: gateway.url, requestTimeoutMs: 30_000 };
  sandbox = await Sandbox.create(opts);
});
afterAll(async () => gateway?.close());

/** A command printing the token without naming it whole (the two halves meet only in its output). */
const printToken = `printf '%s' '${TOKEN.slice(0, 9)}' | cat; printf '%s' '${TOKEN.slice(9)}'`;

describe("the gateway's token", () => {
  it("is masked in a command's stdout and stderr, also when printed in two pieces", async () => {
    const result = await sandbox.commands.run(`${printToken}; (${printToken}) >&2`);
    expect(result.stdout).toBe("[REDACTED]");
    expect(result.stderr).toBe("[REDACTED]");
  });

  it("is masked in the output of a process started with stdin", async () => {
    const handle = await sandbox.commands.run(`${printToken}; (${printToken}) >&2`, { background: true, stdin: true });
    const result = await handle.wait();
    expect(result.stdout).toBe("[REDACTED]");
    expect(result.stderr).toBe("[REDACTED]");
  });

  it("is masked in a PTY's output", async () => {
    let out = "";
    const pty = await sandbox.pty.create({
      cols: 80,
      rows: 24,
      onData: (d) => void (out += new TextDecoder().decode(d)),
    });
    await sandbox.pty.sendInput(pty.pid, new TextEncoder().encode(`${printToken}; echo; exit\n`));
    await pty.wait().catch(() => undefined);
    expect(out).toContain("[REDACTED]");
    expect(out).not.toContain(TOKEN);
  });
});

describe("the gateway's token in names a command chose", () => {
  const half = [TOKEN.slice(0, 9), TOKEN.slice(9)];
  const dir = `/tmp/e2b-guards-names-${process.pid}`;
  // A file and a symlink named after the token, made by a command that never names it whole.
  const makeNames = `mkdir -p ${dir} && touch ${dir}/'${half[0]}''${half[1]}' && ln -sfn ${dir}/'${half[0]}''${half[1]}' ${dir}/link-'${half[0]}''${half[1]}'`;

  beforeAll(async () => void (await sandbox.commands.run(makeNames)));
  afterAll(async () => void (await sandbox.commands.run(`rm -rf ${dir}`)));

  it("is masked in ListDir's names, paths and symlink targets", async () => {
    const entries = await sandbox.files.list(dir);
    expect(entries.map((e) => e.name).sort()).toEqual(["[REDACTED]", "link-[REDACTED]"]);
    const link = entries.find((e) => e.name === "link-[REDACTED]")!;
    expect(link.path).toBe(`${dir}/link-[REDACTED]`);
    expect(link.symlinkTarget).toBe(`${dir}/[REDACTED]`);
    expect(JSON.stringify(entries)).not.toContain(TOKEN);
  });

  it("is masked in Stat's name, path and symlink target", async () => {
    const info = await sandbox.files.getInfo(`${dir}/link-${TOKEN}`);
    expect([info.name, info.path, info.symlinkTarget]).toEqual([
      "link-[REDACTED]",
      `${dir}/link-[REDACTED]`,
      `${dir}/[REDACTED]`,
    ]);
  });

  it("is masked in a watch's event names and entries", async () => {
    const seen: FilesystemEvent[] = [];
    // The SDK sends includeEntry only to a newer envd than this one reports: the same sandbox, told it is one.
    const Open = Sandbox as unknown as new (options: Record<string, unknown>) => Sandbox;
    const newer = new Open({
      sandboxId: sandbox.sandboxId,
      envdAccessToken: (sandbox as unknown as { envdAccessToken: string }).envdAccessToken,
      envdVersion: "0.6.4",
      sandboxUrl: gateway.url,
      apiKey: TOKEN,
    });
    const watch = await newer.files.watchDir(dir, (event) => void seen.push(event), { includeEntry: true });
    try {
      await sandbox.commands.run(`touch ${dir}/new-'${half[0]}''${half[1]}'`);
      await eventually(() => seen.some((e) => e.name === "new-[REDACTED]"), "the create event");
      expect(seen.find((e) => e.name === "new-[REDACTED]")!.entry?.path).toBe(`${dir}/new-[REDACTED]`);
      expect(JSON.stringify(seen)).not.toContain(TOKEN);
    } finally {
      await watch.stop();
    }
  });

  it("is masked in List's echo of a process's envs", async () => {
    const handle = await sandbox.commands.run("exec sleep 300", { background: true, envs: { LEAKED: TOKEN } });
    try {
      const listed = (await sandbox.commands.list()).find((p) => p.pid === handle.pid)!;
      expect(listed.envs).toEqual({ LEAKED: "[REDACTED]" });
    } finally {
      expect(await handle.kill()).toBe(true);
    }
  });

  it("is masked in GET /envs, the sandbox's variables as create got them", async () => {
    const box = await Sandbox.create({ ...opts, envs: { LEAKED: `x${TOKEN}x` } });
    const token = (box as unknown as { envdAccessToken: string }).envdAccessToken;
    const res = await fetch(`${gateway.url}/envs`, {
      headers: { "x-access-token": token, "e2b-sandbox-id": box.sandboxId },
    });
    expect(await res.json()).toEqual({ LEAKED: "x[REDACTED]x" });
    await box.kill();
  });
});

describe("files", () => {
  it("masks the token in a file read through /files, leaving every other byte as it was", async () => {
    const dir = `/tmp/e2b-guards-${process.pid}`;
    await sandbox.commands.run(
      `mkdir -p ${dir} && { printf '\\000\\377'; ${printToken}; printf '\\001'; } > ${dir}/copy`,
    );
    const bytes = await sandbox.files.read(`${dir}/copy`, { format: "bytes" });
    expect([...bytes]).toEqual([0, 255, ...new TextEncoder().encode("[REDACTED]"), 1]);
    expect(await sandbox.files.read(`${dir}/copy`)).not.toContain(TOKEN);
    await sandbox.commands.run(`rm -r ${dir}`);
  });

  it("refuses paths outside --allow-root: absolute, relative, through a symlink, for /files and the filesystem service", async () => {
    const link = `/tmp/e2b-guards-link-${process.pid}`;
    await sandbox.commands.run(`ln -s /etc ${link}`);
    try {
      for (const path of ["/etc/hostname", "../../etc/hostname", `${link}/hostname`]) {
        const read = await sandbox.files.read(path).catch((e: unknown) => e);
        expect((read as Error).message).toContain("outside the gateway's allowed roots");
      }
      for (const call of [() => sandbox.files.list("/etc"), () => sandbox.files.write("/etc/e2b-guards", "x")]) {
        const error = await call().catch((e: unknown) => e);
        expect((error as Error).message).toContain("outside the gateway's allowed roots");
      }
      await sandbox.files.write(`/tmp/e2b-guards-ok-${process.pid}`, "fine");
      expect(await sandbox.files.read(`/tmp/e2b-guards-ok-${process.pid}`)).toBe("fine");
    } finally {
      await sandbox.commands.run(`rm -f ${link} /tmp/e2b-guards-ok-${process.pid}`);
    }
  });
});

describe("a command's cwd", () => {
  it("is refused outside --allow-root, absolute or relative, naming process.cwd", async () => {
    for (const cwd of ["/etc", "../../etc"]) {
      const error = await sandbox.commands.run("pwd", { cwd }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain("process.cwd");
      expect((error as Error).message).toContain("outside the gateway's allowed roots");
    }
    const refused = await sandbox.commands.run("pwd", { cwd: "/etc", stdin: true }).catch((e: unknown) => e);
    expect((refused as Error).message).toContain("process.cwd");
    const link = `/tmp/e2b-guards-cwd-${process.pid}`;
    await sandbox.commands.run(`ln -s /etc ${link}`);
    try {
      const through = await sandbox.commands.run("pwd", { cwd: link }).catch((e: unknown) => e);
      expect((through as Error).message).toContain("outside the gateway's allowed roots");
    } finally {
      await sandbox.commands.run(`rm -f ${link}`);
    }
  });

  it("is taken under --allow-root", async () => {
    expect((await sandbox.commands.run("pwd", { cwd: "/tmp" })).stdout.trim()).toBe("/tmp");
  });
});

describe("stdin processes", () => {
  it("count against maxLongLivedPerSession and give their slot back when they end", async () => {
    const box = await Sandbox.create(opts);
    const started: CommandHandle[] = [];
    for (let i = 0; i < 2; i++)
      started.push(await box.commands.run("echo $BASHPID; cat", { background: true, stdin: true }));
    const third = await box.commands.run("cat", { background: true, stdin: true }).catch((e: unknown) => e);
    expect((third as Error).message).toContain("maxLongLivedPerSession");
    await eventually(() => started[0]!.stdout !== "", "the first one's pid");
    const pid = Number(started[0]!.stdout.trim());
    expect(await started[0]!.kill()).toBe(true);
    expect(alive(pid)).toBe(false);
    const again = await box.commands.run("echo again", { stdin: true });
    expect(again.stdout).toBe("again\n");
    await box.kill();
  });

  it("get their stdout and stderr apart, and their own envs", async () => {
    const result = await sandbox.commands.run(`echo out; echo "err $FOO" >&2`, { stdin: true, envs: { FOO: "b a'r" } });
    expect(result.stdout).toBe("out\n");
    expect(result.stderr).toBe("err b a'r\n");
  });

  it("keep a character whose bytes were sent in separate writes", async () => {
    const handle = await sandbox.commands.run("head -c 6; echo", { background: true, stdin: true });
    const bytes = new TextEncoder().encode("é€"); // c3 a9, e2 82 ac
    await handle.sendStdin(bytes.slice(0, 1));
    await handle.sendStdin(bytes.slice(1, 3));
    await handle.sendStdin(bytes.slice(3));
    await handle.sendStdin("x");
    const result = await handle.wait();
    expect(result.stdout).toBe("é€x\n");
  });
});

describe("PTYs", () => {
  it("gives a PTY its own envs", async () => {
    let out = "";
    const decoder = new TextDecoder();
    const pty = await sandbox.pty.create({
      cols: 80,
      rows: 24,
      envs: { PTY_VAR: "it's here" },
      onData: (d) => void (out += decoder.decode(d)),
    });
    await sandbox.pty.sendInput(pty.pid, new TextEncoder().encode(`echo "<$PTY_VAR>"; exit\n`));
    await pty.wait().catch(() => undefined);
    expect(out).toContain("<it's here>");
  });
});

describe("bad input", () => {
  it("refuses a PTY larger than 1000 at start, as at resize", async () => {
    const error = await sandbox.pty.create({ cols: 5000, rows: 24, onData: () => undefined }).catch((e: unknown) => e);
    expect((error as Error).message).toContain("pty.size must give cols and rows from 1 to 1000, got 5000x24");
  });

  it("names envVars for a bad variable name at create", async () => {
    const error = await Sandbox.create({ ...opts, envs: { "1BAD": "x" } }).catch((e: unknown) => e);
    expect((error as Error).message).toContain("envVars has an invalid variable name");
  });
});
