/**
 * Env values are secrets: every validation path that takes env-like input
 * names the variable and never prints its value, whatever is wrong with it.
 * The adversary is a secret-looking value that is invalid in each way a
 * validator checks (NUL byte, wrong type, "NAME=value" in place of a name,
 * a broken JSON file or body around it).
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { normalizeApptainerConfig } from "../../src/backends/apptainer/config.js";
import { normalizeDaytonaConfig } from "../../src/backends/daytona/config.js";
import { normalizeDockerConfig } from "../../src/backends/docker/config.js";
import { normalizeGatewayConfig } from "../../src/backends/gateway/config.js";
import { normalizeLocalConfig } from "../../src/backends/local/config.js";
import { normalizeModalConfig } from "../../src/backends/modal/config.js";
import { normalizeSshConfig } from "../../src/backends/ssh/config.js";
import { readConfigFile } from "../../src/cli/config-file.js";
import { parsePlan } from "../../src/cli/plan.js";
import { createSandboxSession } from "../../src/ai/sandbox.js";
import { createEnvironment, InvalidOptionError } from "../../src/index.js";
import { stringRecord } from "../../src/core/options.js";
import { api, startTestGateway } from "../gateway/helpers.js";

const SECRET = "sk-live-4f9c2a7d1e8b3c6a";
/** Any 8 characters of the secret in a message count as a leak (a truncated copy leaks too). */
const leaks = (message: string): boolean => {
  for (let i = 0; i + 8 <= SECRET.length; i++) if (message.includes(SECRET.slice(i, i + 8))) return true;
  return false;
};

/** Env-like inputs that are invalid, each holding the secret where a validator might quote it. */
const BAD_ENVS: [string, unknown][] = [
  ["a value with a NUL byte", { API_KEY: `${SECRET}\0` }],
  ["a value with a NUL byte at the end of a long value", { API_KEY: `${SECRET.repeat(10)}\0` }],
  ["a value that is a number", { API_KEY: 4242424242 }],
  ["a value that is an object", { API_KEY: { secret: SECRET } }],
  ["the whole env as a string", `API_KEY=${SECRET}`],
  ["the whole env as an array", [`API_KEY=${SECRET}`]],
  ['"NAME=value" as a name', { [`API_KEY=${SECRET}`]: "" }],
];

/** Every backend's config validation, with what else it needs to get as far as `env`. */
const BACKEND_CONFIGS: [string, (env: unknown) => unknown][] = [
  ["local", (env) => normalizeLocalConfig({ env })],
  ["docker", (env) => normalizeDockerConfig({ image: "debian", env }, () => undefined)],
  ["ssh", (env) => normalizeSshConfig({ host: "example.invalid", env }, () => undefined)],
  ["apptainer", (env) => normalizeApptainerConfig({ image: "docker://debian", env })],
  ["modal", (env) => normalizeModalConfig({ image: "debian", env }, () => undefined)],
  ["daytona", (env) => normalizeDaytonaConfig({ env }, () => undefined)],
  ["gateway", (env) => normalizeGatewayConfig({ url: "http://127.0.0.1:1", token: "t".repeat(32), env })],
  ["stringRecord", (env) => stringRecord("env", env)],
];

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected a validation error");
}

describe("env values never appear in error messages", () => {
  for (const [backend, normalize] of BACKEND_CONFIGS) {
    it.each(BAD_ENVS)(`${backend} env: %s`, (_, env) => {
      const message = messageOf(() => normalize(env));
      expect(message).toMatch(/env/);
      expect(leaks(message), message).toBe(false);
    });
  }

  it("names the variable whose value is wrong", () => {
    const message = messageOf(() => stringRecord("env", { API_KEY: `${SECRET}\0` }));
    expect(message).toContain("env.API_KEY");
  });

  it.each([
    ["a NAME=value entry", [`API_KEY=${SECRET}`]],
    ["a number", [4242424242]],
    ["a string in place of the list", `API_KEY=${SECRET}`],
  ])("docker forwardEnv: %s", (_, forwardEnv) => {
    const message = messageOf(() => normalizeDockerConfig({ image: "debian", forwardEnv }, () => undefined));
    expect(message).toMatch(/forwardEnv/);
    expect(leaks(message), message).toBe(false);
  });

  it("the ai sandbox's per-run env", async () => {
    const session = await createEnvironment();
    try {
      const sandbox = createSandboxSession(session);
      for (const [, env] of BAD_ENVS) {
        const error = await sandbox.run({ command: "true", env } as unknown as Parameters<typeof sandbox.run>[0]).then(
          () => undefined,
          (e: unknown) => e as Error,
        );
        expect(error).toBeInstanceOf(InvalidOptionError);
        expect(leaks(error!.message), error!.message).toBe(false);
      }
    } finally {
      await session.close();
    }
  });

  it("a gateway's answer to a session request with a bad env", async () => {
    const gateway = await startTestGateway();
    try {
      for (const [, env] of BAD_ENVS) {
        const answer = await api(gateway, "POST", "/v1/sessions", { env });
        expect(answer.status).toBe(400);
        expect(leaks(JSON.stringify(answer.body)), JSON.stringify(answer.body)).toBe(false);
      }
      const broken = await api(gateway, "POST", "/v1/sessions", undefined, {
        rawBody: `{"env": {"API_KEY": ${SECRET}}}`,
      });
      expect(broken.status).toBe(400);
      expect(leaks(JSON.stringify(broken.body)), JSON.stringify(broken.body)).toBe(false);
    } finally {
      await gateway.close();
    }
  });

  it("a plan whose environment is not an object (shellwright run)", () => {
    const message = messageOf(() => parsePlan({ environment: `API_KEY=${SECRET}`, steps: [] }));
    expect(message).toContain("plan.environment");
    expect(leaks(message), message).toBe(false);
  });

  describe("a --config file", () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-options-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it.each([
      ["an unquoted value", `{"env": {"API_KEY": ${SECRET}}}`],
      ["a trailing comma", `{"env": {"API_KEY": "${SECRET}"},}`],
      ["an unterminated string", `{"env": {"API_KEY": "${SECRET}`],
      ["text after the object", `{"env": {}} ${SECRET}`],
    ])("that is not valid JSON: %s", (_, text) => {
      const file = join(dir, "config.json");
      writeFileSync(file, text);
      const message = messageOf(() => readConfigFile(file));
      expect(message).toContain("is not valid JSON");
      expect(leaks(message), message).toBe(false);
    });

    it("whose env is invalid, through createEnvironment", async () => {
      const file = join(dir, "config.json");
      writeFileSync(file, JSON.stringify({ env: { API_KEY: 42, OTHER: SECRET }, cwd: dir }));
      const error = await createEnvironment(readConfigFile(file)).then(
        async (env) => (await env.close(), undefined),
        (e: unknown) => e as Error,
      );
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(leaks(error!.message)).toBe(false);
    });
  });
});
