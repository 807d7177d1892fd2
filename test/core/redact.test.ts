import { describe, expect, it } from "vitest";
import { isSecretName, Redactor, REDACTED, secretEnvValues, StreamRedactor } from "../../src/core/redact.js";
import { truncationNotice } from "../../src/core/output.js";

const SECRET = "s3cr3t-Value-0123456789";
const redactor = new Redactor([SECRET, "short"]);

describe("Redactor", () => {
  it("masks known values and leaves short ones", () => {
    expect(redactor.redact(`a ${SECRET} b short c`)).toBe(`a ${REDACTED} b short c`);
  });

  it.each([
    ["OpenAI", "sk-proj-abcdefghijklmnopqrstuvwxyz0123"],
    ["Anthropic", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz_0123-AAAA"],
    ["GitHub", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
    ["GitHub fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"],
    ["AWS", "AKIAIOSFODNN7EXAMPLE"],
    ["Slack", "xoxb-1234567890-abcdefghij"],
  ])("masks a %s key", (_name, key) => {
    expect(new Redactor([]).redact(`key=${key} next`)).toBe(`key=${REDACTED} next`);
  });

  it("masks a Bearer token but keeps the word", () => {
    expect(new Redactor([]).redact("Authorization: Bearer abc.def-ghi_jkl\n")).toBe(
      `Authorization: Bearer ${REDACTED}\n`,
    );
  });

  it("masks private key blocks, also unfinished ones and ones that began before the text", () => {
    const block = "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAB3Nza\nC1yc2E\n-----END OPENSSH PRIVATE KEY-----";
    const r = new Redactor([]);
    expect(r.redact(`x\n${block}\ny`)).toBe(`x\n${REDACTED}\ny`);
    expect(r.redact("x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow")).toBe(`x\n${REDACTED}`);
    expect(r.redact("MIIEow\nabc\n-----END RSA PRIVATE KEY-----\ny")).toBe(`${REDACTED}\ny`);
  });

  it("leaves ordinary text and public keys alone", () => {
    const text = "task-list sk-short ghp_x AKIA Bearer x -----BEGIN PUBLIC KEY-----\nabc\n";
    expect(new Redactor([]).redact(text)).toBe(text);
  });

  it("never splits a multi-byte character next to a secret", () => {
    expect(redactor.redact(`é😀${SECRET}😀é`)).toBe(`é😀${REDACTED}😀é`);
    const r = new Redactor(["😀abcdef😀"]);
    expect(r.redact("x😀abcdef😀y")).toBe(`x${REDACTED}y`);
  });

  it("masks both fragments of a secret cut by a truncation notice", () => {
    const notice = truncationNotice(100, 1000);
    const text = `head ${SECRET.slice(0, 9)}${notice}${SECRET.slice(9)} tail`;
    expect(redactor.redact(text)).toBe(`head ${REDACTED}${notice}${REDACTED} tail`);
    const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz";
    expect(new Redactor([]).redact(`a ${key.slice(0, 8)}${notice}${key.slice(8)} b`)).toBe(
      `a ${REDACTED}${notice}${REDACTED} b`,
    );
    const block = "-----BEGIN RSA PRIVATE KEY-----\nAAAA\nBBBB\n-----END RSA PRIVATE KEY-----";
    expect(new Redactor([]).redact(`a ${block.slice(0, 40)}${notice}${block.slice(40)} b`)).toBe(
      `a ${REDACTED}${notice}${REDACTED} b`,
    );
  });

  it("masks a fragment at an open end or start", () => {
    expect(redactor.redact(`out ${SECRET.slice(0, 6)}`, { openEnd: true })).toBe(`out ${REDACTED}`);
    expect(redactor.redact(`${SECRET.slice(-6)} out`, { openStart: true })).toBe(`${REDACTED} out`);
    expect(redactor.redact(`out ${SECRET.slice(0, 6)}`)).toBe(`out ${SECRET.slice(0, 6)}`);
  });

  it("masks JSON-escaped forms", () => {
    const r = new Redactor(['pa"ss\\word']);
    expect(r.redact(JSON.stringify({ v: 'pa"ss\\word' }))).toBe(`{"v":"${REDACTED}"}`);
  });
});

describe("StreamRedactor", () => {
  const stream = (r: Redactor, chunks: string[]): string[] => {
    const s = new StreamRedactor(r);
    return [...chunks.map((chunk) => s.push(chunk)), s.end()];
  };

  it("masks a secret split across chunks, at every split point", () => {
    const text = `before ${SECRET} after Bearer tok3n-abcdefgh and sk-ant-api03-abcdefghijklmnopqrstuvwxyz é😀\n`;
    const expected = `before ${REDACTED} after Bearer ${REDACTED} and ${REDACTED} é😀\n`;
    for (let i = 1; i < text.length; i++) {
      const out = stream(redactor, [text.slice(0, i), text.slice(i)]);
      expect(out.join(""), `split at ${i}`).toBe(expected);
    }
  });

  it("passes ordinary text through without holding whole lines back", () => {
    const out = stream(redactor, ["line one\n", "started", "\n", "a-b ok"]);
    expect(out).toEqual(["line one\n", "started", "\n", "a-b ok", ""]);
  });

  it("masks a private key block streamed in many pieces", () => {
    const block = "-----BEGIN RSA PRIVATE KEY-----\nAAAA\nBBBB\n-----END RSA PRIVATE KEY-----\nok\n";
    const out = stream(new Redactor([]), block.split(""));
    expect(out.join("")).toBe(`${REDACTED}\nok\n`);
  });
});

describe("secret names", () => {
  it("recognises secret-looking names", () => {
    expect(
      ["GITHUB_TOKEN", "aws_secret_access_key", "DB_PASSWORD", "MY_CREDENTIALS", "API_KEY"].every(isSecretName),
    ).toBe(true);
    expect(["HOME", "PATH", "LANG"].some(isSecretName)).toBe(false);
    expect(secretEnvValues({ API_TOKEN: "abc", HOME: "/root" })).toEqual(["abc"]);
  });
});
