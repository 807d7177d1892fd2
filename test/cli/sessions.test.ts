/** `shellwright sessions` and `close` on the built command: secrets in a session's config never printed. */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, cliHome } from "../helpers/cli.js";

const where = cliHome();
afterAll(() => where.remove());

const SECRET = "s3cr3t-value-1234";

describe("shellwright sessions", () => {
  it("--json shows env names but never their values", () => {
    const config = join(where.runtime, "config.json");
    writeFileSync(config, JSON.stringify({ backend: "local", env: { API_TOKEN: SECRET } }));
    expect(cli(where, ["exec", "--config", config, "-s", "secretive", 'test "$API_TOKEN" = ' + SECRET])).toMatchObject({
      code: 0,
    });
    const listed = cli(where, ["sessions", "--json"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(SECRET);
    const { sessions } = JSON.parse(listed.stdout) as { sessions: { name: string; config: { env: object } }[] };
    expect(sessions.find((s) => s.name === "secretive")!.config.env).toEqual({ API_TOKEN: "[REDACTED]" });
    expect(cli(where, ["sessions"]).stdout).not.toContain(SECRET);
    expect(cli(where, ["close", "secretive"]).code).toBe(0);
  });

  it("an error about an env value does not print the value", () => {
    const config = join(where.runtime, "bad.json");
    writeFileSync(config, JSON.stringify({ backend: "local", env: { API_TOKEN: `${SECRET}\u0000` } }));
    const result = cli(where, ["exec", "--config", config, "true"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("env.API_TOKEN must not contain a NUL byte");
    expect(result.stderr).not.toContain(SECRET);
  });
});
