/** src/http/token-source.ts: the token from a private file or an environment variable. */

import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InvalidOptionError } from "../../src/core/errors.js";
import { loadToken, TokenSourceError } from "../../src/http/token-source.js";

const TOKEN = "test-token-0123456789abcdef";
const envVar = "SHELLWRIGHT_TEST_TOKEN";
const scratch = mkdtempSync(join(tmpdir(), "sw-token-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function tokenFile(name: string, content: string, mode: number): string {
  const file = join(scratch, name);
  writeFileSync(file, content);
  chmodSync(file, mode);
  return file;
}

function failure(run: () => unknown): TokenSourceError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(TokenSourceError);
    return error as TokenSourceError;
  }
  throw new Error("expected loadToken to throw");
}

describe("loadToken from a file", () => {
  it("reads a private file, without its final newline, and prefers it to the variable", () => {
    const file = tokenFile("private", `${TOKEN}\n`, 0o600);
    expect(loadToken({ tokenFile: file, envVar, env: { [envVar]: "another-token-0123456789" } })).toBe(TOKEN);
    expect(loadToken({ tokenFile: tokenFile("read-only", `  ${TOKEN}\r\n`, 0o400), envVar, env: {} })).toBe(TOKEN);
  });

  for (const mode of [0o640, 0o604, 0o644, 0o620]) {
    it(`refuses mode ${mode.toString(8)}, naming the file and the fix`, () => {
      const file = tokenFile(`open-${mode.toString(8)}`, TOKEN, mode);
      const error = failure(() => loadToken({ tokenFile: file, envVar, env: {} }));
      expect(error.message).toContain(`The token file ${file} is open to other users (mode ${mode.toString(8)})`);
      expect(error.message).toContain(`chmod 600 ${file}`);
      expect(error.message).not.toContain(TOKEN);
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error.option).toBe("tokenFile");
    });
  }

  it("quotes a path with spaces in the chmod it suggests", () => {
    const file = tokenFile("my token", TOKEN, 0o644);
    expect(failure(() => loadToken({ tokenFile: file, envVar })).message).toContain(`chmod 600 '${file}'`);
  });

  it.skipIf(process.getuid?.() !== 0)("refuses a file that belongs to another user", () => {
    const file = tokenFile("not-mine", TOKEN, 0o600);
    chownSync(file, 65534, 65534);
    const message = failure(() => loadToken({ tokenFile: file, envVar })).message;
    expect(message).toContain(`The token file ${file} belongs to uid 65534`);
    expect(message).not.toContain(TOKEN);
  });

  it("says why a file cannot be read", () => {
    const missing = join(scratch, "missing");
    expect(failure(() => loadToken({ tokenFile: missing, envVar })).message).toMatch(
      new RegExp(`^Cannot read the token file ${missing}: .*ENOENT`),
    );
    const dir = join(scratch, "a-directory");
    mkdirSync(dir, { mode: 0o700 });
    expect(failure(() => loadToken({ tokenFile: dir, envVar })).message).toContain("is not a regular file");
  });

  it("refuses a short token or one with whitespace inside, without showing it", () => {
    for (const content of ["hunter2", "hunter2 hunter2 hunter2", ""]) {
      const file = tokenFile("weak", content, 0o600);
      const message = failure(() => loadToken({ tokenFile: file, envVar })).message;
      expect(message).toMatch(new RegExp(`^The token from token file ${file} must be at least 16 characters`));
      if (content !== "") expect(message).not.toContain("hunter2");
    }
  });
});

describe("loadToken from the environment", () => {
  it("reads the variable, trimmed; unset or empty is no token", () => {
    expect(loadToken({ envVar, env: { [envVar]: TOKEN } })).toBe(TOKEN);
    expect(loadToken({ envVar, env: { [envVar]: ` ${TOKEN}\n` } })).toBe(TOKEN);
    expect(loadToken({ envVar, env: {} })).toBeUndefined();
    expect(loadToken({ envVar, env: { [envVar]: "" } })).toBeUndefined();
  });

  it("refuses a weak token, naming the variable and not the value", () => {
    const error = failure(() => loadToken({ envVar, env: { [envVar]: "hunter2" } }));
    expect(error.message).toMatch(/^The token from \$SHELLWRIGHT_TEST_TOKEN must be at least 16 characters/);
    expect(error.message).not.toContain("hunter2");
    expect(error.option).toBe(envVar);
    // Whitespace alone is a mistake, not "no token" (which could mean serving without one).
    expect(() => loadToken({ envVar, env: { [envVar]: "   " } })).toThrow(TokenSourceError);
  });
});
