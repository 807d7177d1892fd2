import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildCommandScript, buildInitScript, quoteCwd, sessionPaths, shellQuote } from "../../src/core/script.js";

const plan = {
  sessionId: "0123456789ab",
  paths: sessionPaths("/tmp", "0123456789ab"),
  callId: "cafe00000001",
  renameInScript: true,
  writeCwdFile: false,
};

describe("shellQuote", () => {
  it("round-trips any NUL-free string through bash", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 50 }).filter((s) => !s.includes("\0")),
        (s) => {
          expect(execFileSync("bash", ["-c", `printf %s ${shellQuote(s)}`]).toString()).toBe(s);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("quoteCwd", () => {
  it("leaves a leading ~ for bash to expand and quotes the rest", () => {
    expect(quoteCwd("~")).toBe("~");
    expect(quoteCwd("~/a b")).toBe("~/'a b'");
    expect(quoteCwd("/x'y")).toBe(`'/x'\\''y'`);
  });
});

describe("buildCommandScript", () => {
  const base = { ...plan, command: "echo hi", cwd: "/tmp", snapshotReady: true, stdinOnPipe: false, reportPid: false };

  it("never spells out the whole marker token, so ps cannot show it", () => {
    expect(buildCommandScript(base)).not.toContain(`__SHELLWRIGHT_CWD_${plan.sessionId}__`);
  });

  it("gives an empty stdin when there is no data", () => {
    expect(buildCommandScript(base)).toMatch(/eval 'echo hi' 0<\/dev\/null$/);
    expect(buildCommandScript({ ...base, stdinOnPipe: true })).toMatch(/eval 'echo hi'$/);
  });

  it("moves dumps into place with mv only when told to", () => {
    expect(buildCommandScript(base)).toContain("command mv -f");
    expect(buildCommandScript({ ...base, renameInScript: false })).not.toContain(" mv ");
  });

  it("neither sources nor dumps a snapshot in the login fallback", () => {
    const script = buildCommandScript({ ...base, snapshotReady: false });
    expect(script).not.toContain("source");
    expect(script).not.toContain("export -p");
  });

  it("embeds stdin as base64 that decodes byte-exact", () => {
    const bytes = Uint8Array.from([0, 1, 10, 255, 39, 34]);
    const script = buildCommandScript({
      ...base,
      command: "od -An -tx1",
      embeddedStdin: bytes,
      snapshotReady: false,
      renameInScript: false,
    });
    const out = execFileSync("bash", ["-c", script.replace(/builtin trap .*? EXIT\n/s, "")]).toString();
    expect(out.replace(/\s+/g, "")).toBe("00010aff2722");
  });

  it("prints the PID first when asked", () => {
    expect(buildCommandScript({ ...base, reportPid: true }).split("\n")[1]).toContain("__SHELLWRIGHT_PID_%s__%s__");
  });
});

describe("buildInitScript", () => {
  it("re-executes as a login shell and fails with 126 on a bad cwd", () => {
    const script = buildInitScript({ ...plan, cwd: "/definitely/not/here" });
    expect(script).toContain('exec "$BASH" -l -c');
    let status = 0;
    try {
      execFileSync("bash", ["-c", script], { stdio: "pipe" });
    } catch (error) {
      status = (error as { status: number }).status;
    }
    expect(status).toBe(126);
  });
});
