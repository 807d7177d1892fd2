/**
 * Secret redaction in what a model sees, through the tools on a real local
 * session: each tool masks an env secret and each key shape, execute() stays
 * raw, the setting turns it off, and a secret cut by a poll, a head/tail cut
 * or a stream chunk is still masked.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../../src/index.js";
import { REDACTED } from "../../../src/core/redact.js";
import { callTool } from "../../../src/tools/registry.js";
import { toolSettings, type ToolSettingsInput } from "../../../src/tools/shared/tool-settings.js";

// No four characters of it in a row can be hex: the ids in the paths the tools print are, at random.
const TOKEN = "tok-QXZV9WPMK7RTYU-zyx";
const LISTED = "listed-secret-value-42";
const SHORT = "abc12";
const KEYS = {
  openai: "sk-proj-abcdefghijklmnopqrstuvwxyz0123",
  anthropic: "sk-ant-api03-abcdefghijklmnopqrstuvwxyz_0123-AAAA",
  github: "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
  aws: "AKIAIOSFODNN7EXAMPLE",
  slack: "xoxb-1234567890-abcdefghij",
};
const PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq83vEjA1\n-----END RSA PRIVATE KEY-----";

/** No fragment of `secret` of 4 characters or more appears in `text`. */
const noFragment = (text: string, secret: string): void => {
  for (let i = 0; i + 4 <= secret.length; i++) expect(text).not.toContain(secret.slice(i, i + 4));
};

describe("secret redaction in the tools (local)", () => {
  let session: Environment;
  let dir: string;
  const call = (tool: string, args: unknown, settings?: ToolSettingsInput, onOutput?: (text: string) => void) =>
    callTool(tool, args, {
      session,
      ...(settings ? { settings: toolSettings(settings) } : {}),
      ...(onOutput ? { onOutput } : {}),
    });

  beforeAll(async () => {
    session = await createEnvironment({
      env: { API_TOKEN: TOKEN, SHORT_KEY: SHORT, PLAIN_VALUE: "not-a-secret-value" },
      secrets: [LISTED],
    });
    dir = (await session.execute("mktemp -d")).output.trim();
    const file = [TOKEN, LISTED, SHORT, ...Object.values(KEYS), "Authorization: Bearer abcdef.ghijkl-123", PEM].join(
      "\n",
    );
    await session.execute(`cat > ${dir}/secrets.txt`, { stdin: `${file}\n` });
  });
  afterAll(async () => {
    await session?.execute(`rm -rf ${dir}`);
    await session?.close();
  });

  it("exposes the values to mask, the secret-looking env values and the secrets option", () => {
    expect([...session.secretValues!].sort()).toEqual([LISTED, SHORT, TOKEN].sort());
  });

  it("terminal masks env secrets, listed secrets and every key shape; short values stay", async () => {
    const r = await call("terminal", { command: `cat ${dir}/secrets.txt; echo "$PLAIN_VALUE"` });
    const output = r.output as string;
    for (const secret of [TOKEN, LISTED, ...Object.values(KEYS), "abcdef.ghijkl-123", "MIIEowIBAAKCAQEA"])
      expect(output).not.toContain(secret);
    expect(output).toContain(`Authorization: Bearer ${REDACTED}`);
    expect(output).toContain(SHORT);
    expect(output).toContain("not-a-secret-value");
    expect(output.split("\n").slice(0, 7)).toEqual(
      Array(7)
        .fill(REDACTED)
        .map((m, i) => (i === 2 ? SHORT : m)),
    );
  });

  it("execute() stays raw", async () => {
    const r = await session.execute(`cat ${dir}/secrets.txt`);
    expect(r.output).toContain(TOKEN);
    expect(r.output).toContain(KEYS.github);
  });

  it("redactSecrets: false shows everything raw", async () => {
    const r = await call("terminal", { command: `cat ${dir}/secrets.txt` }, { redactSecrets: false });
    expect(r.output).toContain(TOKEN);
    expect(r.output).toContain(LISTED);
    expect(r.output).toContain(KEYS.anthropic);
    expect(() => toolSettings({ redactSecrets: "no" as unknown as boolean })).toThrow(
      /redactSecrets must be a boolean/,
    );
  });

  it("read_file masks and keeps line numbers", async () => {
    const r = await call("read_file", { path: `${dir}/secrets.txt` });
    const content = r.content as string;
    expect(content).not.toContain(TOKEN);
    expect(content).not.toContain("MIIEowIBAAKCAQEA");
    expect(content).toContain(`1|${REDACTED}`);
    expect(content).toContain(`3|${SHORT}`);
    expect(content).toContain(`11|${REDACTED}`); // a key block keeps its lines
    expect(content).toContain(`13|${REDACTED}`);
  });

  it("search_files masks matched lines", async () => {
    const r = await call("search_files", { pattern: "tok-|ghp_|listed", path: dir });
    const text = JSON.stringify(r);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(KEYS.github);
    expect(text).not.toContain(LISTED);
    expect(text).toContain(REDACTED);
  });

  it("execute_code masks what the script prints, while its tool calls see real data", async (context) => {
    if ((await session.execute("command -v python3")).exitCode !== 0) context.skip();
    const code = [
      "import os",
      `r = read_file(path=${JSON.stringify(`${dir}/secrets.txt`)})`,
      "print('seen raw:', os.environ['API_TOKEN'] in r['content'])",
      "print(os.environ['API_TOKEN'])",
    ].join("\n");
    const r = await call("execute_code", { code });
    expect(r.output).toBe(`seen raw: True\n${REDACTED}\n`);
  });

  it("a saved (persisted) output holds no secret", async () => {
    const r = await call(
      "terminal",
      { command: `for i in $(seq 200); do echo "line $i $API_TOKEN"; done` },
      { inlineOutputChars: 500 },
    );
    const path = /Full output saved to: (\S+)/.exec(r.output as string)![1]!;
    const saved = await session.execute(`cat ${path}`);
    expect(saved.output).toContain(`line 200 ${REDACTED}`);
    expect(saved.output).not.toContain(TOKEN);
    noFragment(r.output as string, TOKEN);
    expect((r.output as string).length).toBeLessThan(1000);
  });

  it("a secret across the head/tail cut is masked on both sides", async () => {
    const settings = { captureOutputChars: 100, inlineOutputChars: 100_000 };
    // The kept head (50 characters) ends inside the secret.
    const head = await call("terminal", { command: `printf '%040d%s%0200d' 0 "$API_TOKEN" 0` }, settings);
    expect(head.output).toContain(`${"0".repeat(40)}${REDACTED}`);
    noFragment(head.output as string, TOKEN);
    // The kept tail (50 characters) starts inside it.
    const tail = await call("terminal", { command: `printf '%0300d%s%040d' 0 "$API_TOKEN" 0` }, settings);
    expect(tail.output).toContain(`${REDACTED}${"0".repeat(40)}`);
    noFragment(tail.output as string, TOKEN);
    // The inline cut of terminal output, over masked text.
    const inline = await call(
      "terminal",
      { command: `printf '%030d%s%030d' 0 "$API_TOKEN" 0` },
      { inlineOutputChars: 40, inlineHeadFraction: 0.9 },
    );
    noFragment(inline.output as string, TOKEN);
  });

  it("keeps multi-byte neighbours intact", async () => {
    const r = await call("terminal", { command: `printf 'é😀%s😀é\\n' "$API_TOKEN"` });
    expect(r.output).toBe(`é😀${REDACTED}😀é\n`);
  });

  it("streamed output is masked, a secret split between chunks included", async () => {
    const chunks: string[] = [];
    const r = await call(
      "terminal",
      { command: `printf 'start %s' "\${API_TOKEN:0:9}"; sleep 0.5; printf '%s end\\n' "\${API_TOKEN:9}"` },
      undefined,
      (text) => chunks.push(text),
    );
    expect(r.output).toBe(`start ${REDACTED} end\n`);
    expect(chunks.join("")).toBe(`start ${REDACTED} end\n`);
    noFragment(chunks.join(""), TOKEN);
  });

  it("streamed output is masked when an escape sequence splits the secret, as the result is", async () => {
    for (const command of [
      'printf "%s\\033[0m%s\\n" "${API_TOKEN:0:11}" "${API_TOKEN:11}"',
      // The escape itself cut by a chunk boundary.
      'printf "%s\\033[" "${API_TOKEN:0:11}"; sleep 0.3; printf "0m%s\\n" "${API_TOKEN:11}"',
    ]) {
      const chunks: string[] = [];
      const r = await call("terminal", { command }, undefined, (text) => chunks.push(text));
      expect(r.output).toBe(`${REDACTED}\n`);
      expect(chunks.join("")).toBe(`${REDACTED}\n`);
      noFragment(chunks.join(""), TOKEN);
    }
  });

  it("process output: a secret split across polls is masked", async () => {
    const started = await call("terminal", {
      command: `printf 'start %s' "\${API_TOKEN:0:10}"; sleep 1.5; printf '%s end\\n' "\${API_TOKEN:10}"; echo ${KEYS.slack}`,
      background: true,
    });
    const id = started.session_id as string;
    await new Promise((resolve) => setTimeout(resolve, 700));
    const first = await call("process", { action: "poll", session_id: id });
    expect(first.status).toBe("running");
    expect(first.output_preview).toBe(`start ${REDACTED}`);
    const done = await call("process", { action: "wait", session_id: id, timeout: 30 });
    expect(done.output).toBe(`start ${REDACTED} end\n${REDACTED}\n`);
    const log = await call("process", { action: "log", session_id: id });
    expect(log.output).toBe(`start ${REDACTED} end\n${REDACTED}`);
    const list = JSON.stringify(await call("process", { action: "list" }));
    expect(list).not.toContain(TOKEN.slice(0, 10));
    const raw = await call("process", { action: "log", session_id: id }, { redactSecrets: false });
    expect(raw.output).toContain(TOKEN);
  });
});

describe("the secrets option", () => {
  it.each([
    ["a string", "hunter2-value", /secrets must be an array of strings, got a string of 13 characters/],
    ["an empty entry", ["ok-value-1", ""], /secrets\[1\] must be a non-empty string/],
    ["a number entry", [123456789], /secrets\[0\] must be a non-empty string, got a number/],
  ])("rejects %s, naming the option and never the value", async (_what, secrets, message) => {
    const error = await createEnvironment({ secrets } as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      name: "InvalidOptionError",
      option: "secrets",
      message: expect.stringMatching(message),
    });
    expect((error as Error).message).not.toContain("hunter2");
    expect((error as Error).message).not.toContain("123456789");
  });
});
