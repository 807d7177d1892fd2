/**
 * A sandbox's life beside the gateway's own rules: idle reaping closes it,
 * the server's close ends its processes, a server without a token answers
 * only loopback Host names, and `shellwright serve --api e2b` (the built CLI)
 * serves the SDK.
 */

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Sandbox } from "e2b";
import { startTestGateway, TOKEN } from "../helpers.js";
import { alive, eventually } from "../../helpers/processes.js";

const sdk = (url: string) => ({ apiKey: TOKEN, apiUrl: url, sandboxUrl: url });

describe("sandbox lifecycle", () => {
  it("is closed by the gateway's idle reaping, and then is gone for the SDK", async () => {
    const gateway = await startTestGateway({ apis: ["e2b"], cwd: "/tmp", idleTimeoutMs: 300 });
    try {
      const sandbox = await Sandbox.create(sdk(gateway.url));
      await eventually(() => gateway.registry.size === 0, "the idle sandbox to be reaped");
      expect(await sandbox.isRunning()).toBe(false);
      await expect(Sandbox.getInfo(sandbox.sandboxId, sdk(gateway.url))).rejects.toThrow(/not found/);
    } finally {
      await gateway.close();
    }
  });

  it("is not reaped while a process of it runs", async () => {
    const gateway = await startTestGateway({ apis: ["e2b"], cwd: "/tmp", idleTimeoutMs: 300 });
    try {
      const sandbox = await Sandbox.create(sdk(gateway.url));
      const handle = await sandbox.commands.run("sleep 2; echo still-here", { background: true });
      const result = await handle.wait();
      expect(result.stdout).toBe("still-here\n");
    } finally {
      await gateway.close();
    }
  });

  it("ends every process of every sandbox when the server closes", async () => {
    const gateway = await startTestGateway({ apis: ["e2b"], cwd: "/tmp" });
    const sandbox = await Sandbox.create(sdk(gateway.url));
    const handle = await sandbox.commands.run("echo $$; exec sleep 300", { background: true });
    await eventually(() => handle.stdout !== "", "the pid");
    const pid = Number(handle.stdout.trim());
    try {
      expect(alive(pid)).toBe(true);
      await gateway.close();
      await eventually(() => !alive(pid), "the sleep to end with the server");
    } finally {
      if (alive(pid)) process.kill(pid, "SIGKILL");
    }
  });

  it("answers only loopback Host names without a token", async () => {
    const gateway = await startTestGateway({ apis: ["e2b"], cwd: "/tmp", token: undefined, insecureNoAuth: true });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${gateway.url}/sandboxes`, { headers: { host: "evil.example" } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.once("error", reject);
        req.end();
      });
      expect(status).toBe(403);
      const sandbox = await Sandbox.create({ ...sdk(gateway.url), apiKey: "any-key-at-all" });
      expect((await sandbox.commands.run("echo ok")).stdout).toBe("ok\n");
      await sandbox.kill();
    } finally {
      await gateway.close();
    }
  });
});

describe("beside the other APIs", () => {
  it("serves the SDK on a port that also speaks Shellwright's and hermes' APIs", async () => {
    const gateway = await startTestGateway({ apis: ["e2b", "hermes", "shellwright"], cwd: "/tmp" });
    try {
      const sandbox = await Sandbox.create(sdk(gateway.url));
      expect((await sandbox.commands.run("echo shared-port")).stdout).toBe("shared-port\n");
      const own = await fetch(`${gateway.url}/v1/sessions`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(((await own.json()) as { sessions: { id: string }[] }).sessions.map((s) => s.id)).toContain(
        sandbox.sandboxId,
      );
      await sandbox.kill();
    } finally {
      await gateway.close();
    }
  });
});

describe("shellwright serve --api e2b", () => {
  const ENTRY = join(import.meta.dirname, "../../../dist/cli/serve.js");

  it("serves the SDK from the built CLI", async () => {
    if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: run \`npm run build\` first`);
    const child = spawn(process.execPath, [ENTRY, "--port", "0", "--api", "e2b", "--cwd", "/tmp"], {
      env: { ...process.env, SHELLWRIGHT_GATEWAY_TOKEN: TOKEN },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes("\n")) resolve(out.trim());
        });
        child.once("exit", (code) => reject(new Error(`serve exited with ${code} before listening`)));
      });
      const sandbox = await Sandbox.create(sdk(url));
      expect((await sandbox.commands.run("echo from-cli")).stdout).toBe("from-cli\n");
      await sandbox.kill();
      // Shellwright's own API is not served when only e2b is asked for.
      expect((await fetch(`${url}/v1/sessions`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    } finally {
      child.kill("SIGTERM");
    }
  });
});
