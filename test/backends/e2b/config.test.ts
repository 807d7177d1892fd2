/**
 * The e2b backend's options, refused at the entry point with the option and
 * the value named, before any sandbox exists; its API key in no message,
 * also not in a refused create's (the real SDK against a real E2B API on
 * loopback, with a wrong key).
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox } from "e2b";
import { createEnvironment, createEnvironmentPool, InvalidOptionError, type Gateway } from "../../../src/index.js";
import { startTestGateway, TOKEN } from "../../gateway/helpers.js";
import { normalizeE2bConfig } from "../../../src/backends/e2b/config.js";

let gateway: Gateway;
let connection: { apiKey: string; apiUrl: string; sandboxUrl: string };

beforeAll(async () => {
  gateway = await startTestGateway({ apis: ["e2b"], cwd: "/tmp" });
  connection = { apiKey: TOKEN, apiUrl: gateway.url, sandboxUrl: gateway.url };
});
afterAll(async () => gateway?.close());

/** The error a config gets from createEnvironment (which must fail). */
async function refusal(config: Record<string, unknown>): Promise<InvalidOptionError> {
  const error = await createEnvironment({ backend: "e2b", ...connection, ...config } as never).then(
    async (env) => {
      await env.close();
      throw new Error(`accepted ${JSON.stringify(Object.keys(config))}`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidOptionError);
  return error as InvalidOptionError;
}

/** The ids of the sandboxes the gateway holds: a refused config must not leave one behind. */
const sandboxIds = (): string[] => gateway.registry.list().map((s) => s.id);

describe("e2b options", () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["sandboxTimeoutMs", { sandboxTimeoutMs: 5 }, /sandboxTimeoutMs.*got 5$/],
    ["sandboxTimeoutMs", { sandboxTimeoutMs: 1e9 }, /sandboxTimeoutMs.*got 1000000000$/],
    ["sandboxTimeoutMs", { sandboxTimeoutMs: "x" }, /sandboxTimeoutMs.*"x"/],
    ["onClose", { onClose: "stop" }, /onClose.*"stop"/],
    ["template", { template: "../x" }, /template.*"\.\.\/x"/],
    ["apiUrl", { apiUrl: "ftp://x" }, /apiUrl.*"ftp:\/\/x"/],
    ["sandboxUrl", { sandboxUrl: "not a url" }, /sandboxUrl.*"not a url"/],
    ["domain", { domain: "a b" }, /domain.*"a b"/],
    ["sandboxId", { sandboxId: "a b" }, /sandboxId.*"a b"/],
    // `sandbox` is the local backend's option, not e2b's: an SDK object is no way in (sandboxId is).
    ["sandbox", { sandbox: { sandboxId: "x" } }, /Unknown e2b backend option "sandbox"/],
    ["env.COUNT", { env: { COUNT: 3 } }, /^env\.COUNT must be a string, got a number$/],
    ["metadata.team", { metadata: { team: 7 } }, /^metadata\.team must be a string, got 7$/],
  ];
  it.each(cases)("refuses a bad %s, naming it and its value", async (option, config, message) => {
    const before = sandboxIds();
    const error = await refusal(config);
    expect(error.option).toBe(option);
    expect(error.message).toMatch(message);
    expect(sandboxIds()).toEqual(before);
  });

  it.each([
    ["env", { env: { SECRET_VALUE: "hunter2-env" } }, "got env an object"],
    ["metadata", { metadata: { team: "red" } }, "got metadata an object"],
    ["template", { template: "base" }, 'got template "base"'],
  ])("refuses %s with sandboxId (it is set at creation)", async (option, config, got) => {
    const error = await refusal({ sandboxId: "sbx-1", ...config });
    expect(error.option).toBe(option);
    expect(error.message).toMatch(new RegExp(`^${option} is set when a sandbox is created, but sandboxId`));
    expect(error.message).toContain(`(${got})`);
    // The env's values may be secrets: described, never shown.
    expect(error.message).not.toContain("hunter2-env");
  });

  it.each([
    [42, /apiKey must be a non-empty string, got a number/],
    ["", /apiKey must be a non-empty string, got a string of 0 characters/],
    ["key-with\nnewline-sekrit", /got a string of 23 characters/],
  ])("refuses apiKey %j without showing it", async (apiKey, message) => {
    const error = await refusal({ apiKey });
    expect(error.option).toBe("apiKey");
    expect(error.message).toMatch(message);
    if (typeof apiKey === "string" && apiKey !== "") expect(error.message).not.toContain("sekrit");
  });

  it("never shows a wrong apiKey, in the message or the cause of a create the API refused", async () => {
    const apiKey = "wrong-key-visible-sekrit-4242";
    const before = sandboxIds();
    const error = await createEnvironment({ backend: "e2b", ...connection, apiKey }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toMatch(/Could not create an E2B sandbox.*Unauthorized/);
    for (const text of [error!.message, String(error!.cause), error!.stack ?? ""]) expect(text).not.toContain(apiKey);
    expect(sandboxIds()).toEqual(before);
  });
});

describe("e2b pool", () => {
  it("refuses sandboxId and onClose keep, naming each, and opens nothing", async () => {
    const sandbox = await Sandbox.create({ ...connection });
    try {
      const before = sandboxIds();
      for (const [key, extra, shown] of [
        ["sandboxId", { sandboxId: "sbx-1" }, '"sbx-1"'],
        ["onClose", { onClose: "keep" }, '"keep"'],
      ] as const) {
        const error = await createEnvironmentPool({ backend: "e2b", ...connection, ...extra }, { size: 1 }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(InvalidOptionError);
        expect((error as InvalidOptionError).option).toBe(key);
        expect((error as InvalidOptionError).message).toContain(`A pool cannot use ${key} ${shown}: `);
      }
      expect(sandboxIds()).toEqual(before);
      expect(await sandbox.isRunning()).toBe(true);
    } finally {
      await sandbox.kill();
    }
  });
});

describe("e2b sandbox timeout", () => {
  it("is set and renewed for a sandbox the session makes, and for one connected to only when asked", () => {
    const renews = (config: Record<string, unknown>): boolean =>
      normalizeE2bConfig({ backend: "e2b", ...config }, () => undefined).renewTimeout;
    expect(renews({})).toBe(true);
    expect(renews({ sandboxId: "sbx-1" })).toBe(false);
    expect(renews({ sandboxId: "sbx-1", sandboxTimeoutMs: 600_000 })).toBe(true);
  });
});
