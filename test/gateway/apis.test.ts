/** `apis` / `--api`: which HTTP APIs serve speaks, validated once at the entry point. */

import { describe, expect, it } from "vitest";
import { parseServeArgs } from "../../src/cli/serve.js";
import { InvalidOptionError } from "../../src/index.js";
import { api, startTestGateway } from "./helpers.js";

describe("apis", () => {
  it.each([
    [[], "non-empty array"],
    ["shellwright", "non-empty array"],
    [["shellwright", "shellwright"], 'names "shellwright" twice'],
    [["nope"], 'Unknown API "nope"'],
    [[7], "Unknown API 7"],
  ])("refuses %j before listening, naming the option", async (apis, words) => {
    const start = startTestGateway({ apis: apis as never });
    await expect(start).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(start).rejects.toMatchObject({ option: "apis", message: expect.stringContaining(words) });
  });

  it("serves Shellwright's own API by default and when named", async () => {
    for (const apis of [undefined, ["shellwright" as const]]) {
      const gateway = await startTestGateway(apis === undefined ? {} : { apis });
      try {
        expect((await api(gateway, "GET", "/v1/health")).body.status).toBe("ok");
        expect((await api(gateway, "GET", "/elsewhere")).status).toBe(404);
      } finally {
        await gateway.close();
      }
    }
  });

  it("--api takes a comma-separated list and names the flag when one is unknown", () => {
    const parsed = parseServeArgs(["--api", "shellwright"]);
    expect(parsed !== "help" && parsed.options.apis).toEqual(["shellwright"]);
    expect(() => parseServeArgs(["--api", "shellwright,nope"])).toThrow(/--api: Unknown API "nope"/);
  });
});
