/**
 * Shellwright's own credentials stay out of sessions even in a library user's
 * process: a program that holds SHELLWRIGHT_GATEWAY_TOKEN (for the gateway
 * client) and opens a local session must not hand the token to the model.
 */

import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { normalizeDockerConfig } from "../../src/backends/docker/config.js";
import {
  CREDENTIAL_ENV_VARS,
  GATEWAY_TOKEN_ENV_VAR,
  MCP_TOKEN_ENV_VAR,
  scrubCredentials,
  withoutCredentials,
} from "../../src/core/credentials.js";
import { createEnvironment, InvalidOptionError } from "../../src/index.js";

const saved = { ...process.env };
afterEach(() => {
  for (const name of CREDENTIAL_ENV_VARS) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

describe("Shellwright's credentials", () => {
  it("are the serve and mcp --http token variables", () => {
    expect(CREDENTIAL_ENV_VARS).toEqual(["SHELLWRIGHT_GATEWAY_TOKEN", "SHELLWRIGHT_MCP_TOKEN"]);
  });

  it("withoutCredentials copies the rest; scrubCredentials removes them in place", () => {
    const env = { PATH: "/bin", [GATEWAY_TOKEN_ENV_VAR]: "a", [MCP_TOKEN_ENV_VAR]: "b" };
    expect(withoutCredentials(env)).toEqual({ PATH: "/bin" });
    expect(env[GATEWAY_TOKEN_ENV_VAR]).toBe("a");
    scrubCredentials(env);
    expect(env).toEqual({ PATH: "/bin" });
  });

  it("a local session does not inherit them from this process, nor write them to its snapshot", async () => {
    const token = `secret-${Date.now()}-gateway-token`;
    process.env[GATEWAY_TOKEN_ENV_VAR] = token;
    process.env[MCP_TOKEN_ENV_VAR] = `${token}-mcp`;
    const session = await createEnvironment();
    try {
      const result = await session.execute(
        'export KEEP=1; echo "${SHELLWRIGHT_GATEWAY_TOKEN-unset} ${SHELLWRIGHT_MCP_TOKEN-unset}"; env',
      );
      expect(result.output).toMatch(/^unset unset\n/);
      expect(result.output).not.toContain(token);
      await session.execute("true");
      const snapshot = readFileSync(session.paths.snapshot, "utf8");
      expect(snapshot).toContain("KEEP");
      expect(snapshot).not.toContain(token);
    } finally {
      await session.close();
    }
  });

  it.each(CREDENTIAL_ENV_VARS)("%s passed in env is refused, naming it, without its value", async (name) => {
    const error = await createEnvironment({ env: { [name]: "the-token-value-0123456789" } }).then(
      async (env) => (await env.close(), undefined),
      (e: unknown) => e as InvalidOptionError,
    );
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error!.option).toBe(`env.${name}`);
    expect(error!.message).toContain(name);
    expect(error!.message).not.toContain("the-token-value");
  });

  it.each(CREDENTIAL_ENV_VARS)("%s in docker's forwardEnv is refused", (name) => {
    expect(() => normalizeDockerConfig({ image: "debian", forwardEnv: [name] }, () => undefined)).toThrow(
      new RegExp(`forwardEnv names ${name}, Shellwright's own credential`),
    );
  });
});
