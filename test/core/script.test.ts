import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { startTimeOf } from "../../src/backends/local/process-groups.js";
import { afterAll, describe, expect, it } from "vitest";
import {
  buildCommandScript,
  buildInitScript,
  parseMarkerPayload,
  quoteCwd,
  sessionPaths,
  shellQuote,
} from "../../src/core/script.js";

const plan = {
  sessionId: "0123456789ab",
  paths: sessionPaths("/tmp", "0123456789ab"),
  callId: "cafe00000001",
  renameInScript: true,
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
  const SECRET = "5ec7e75ec7e75ec7e75ec7e75ec7e7aa";
  // The scripts run their inner shell as a login shell: an empty HOME keeps this
  // machine's profile (whose pyenv init can print a lock warning) out of the output.
  const home = mkdtempSync(join(tmpdir(), "sw-script-home-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const run = (script: string, stdin: string | Buffer = `${SECRET}\n`) =>
    execFileSync("bash", ["-c", script], { input: stdin, env: { ...process.env, HOME: home } }).toString();

  it("never holds the secret in the script: the outer shell reads it from stdin", () => {
    const script = buildCommandScript({ ...base, snapshotReady: false, renameInScript: false });
    expect(script).not.toContain(SECRET);
    expect(run(script)).toBe(`hi\n__SHELLWRIGHT_END_${SECRET}__C:/tmp__SHELLWRIGHT_END_${SECRET}__\n`);
  });

  it("gives the command an empty stdin when there is no data, and the rest of stdin when there is", () => {
    const script = (stdinOnPipe: boolean) =>
      buildCommandScript({ ...base, command: "cat", snapshotReady: false, renameInScript: false, stdinOnPipe });
    expect(run(script(false), `${SECRET}\nnot for the command`)).toMatch(/^__SHELLWRIGHT_END_/);
    expect(run(script(true), `${SECRET}\nfor the command`)).toMatch(/^for the command__SHELLWRIGHT_END_/);
  });

  it("moves the dump into place with mv only when told to", () => {
    expect(buildCommandScript(base)).toContain("command -p mv -f");
    expect(buildCommandScript({ ...base, renameInScript: false })).not.toContain(" mv ");
  });

  it("neither sources nor dumps a snapshot in the login fallback", () => {
    const script = buildCommandScript({ ...base, snapshotReady: false });
    expect(script).not.toContain("source");
    expect(script).not.toContain("export -p");
  });

  it("commits nothing for an isolated call, and still completes", () => {
    const script = buildCommandScript({ ...base, isolated: true, snapshotReady: false });
    expect(run(script)).toBe(`hi\n__SHELLWRIGHT_END_${SECRET}__N__SHELLWRIGHT_END_${SECRET}__\n`);
  });

  it("embeds stdin (secret line first) as base64 that decodes byte-exact", () => {
    const bytes = Buffer.concat([Buffer.from(`${SECRET}\n`), Buffer.from([0, 1, 10, 255, 39, 34])]);
    const script = buildCommandScript({
      ...base,
      command: "od -An -tx1",
      embeddedStdin: bytes,
      stdinOnPipe: true,
      snapshotReady: false,
      renameInScript: false,
    });
    const out = run(script, "");
    expect(out.slice(0, out.indexOf("__SHELLWRIGHT")).replace(/\s+/g, "")).toBe("00010aff2722");
    expect(out).toContain(`__SHELLWRIGHT_END_${SECRET}__`);
  });

  it("prints the wrapper's PID and start time first when asked", () => {
    // Start times are clock ticks since boot: the wrapper's lies between a process started before it and one after.
    const before = startTimeOf(process.pid)!;
    const out = run(buildCommandScript({ ...base, reportPid: true }));
    const line = new RegExp(`^__SHELLWRIGHT_PID_${base.sessionId}__(\\d+):(\\d+)__\n`).exec(out);
    expect(line).not.toBeNull();
    const after = execFileSync("bash", ["-c", 'read -r l < /proc/$$/stat; a=(${l##*) }); echo "${a[19]}"'], {
      encoding: "utf8",
    }).trim();
    expect(Number(line![2])).toBeGreaterThanOrEqual(Number(before));
    expect(Number(line![2])).toBeLessThanOrEqual(Number(after));
  });
});

describe("parseMarkerPayload", () => {
  it("decodes the cwd and the commit stamp", () => {
    expect(parseMarkerPayload("N")).toEqual({ committed: false });
    expect(parseMarkerPayload("C:/a%25b%0Ac")).toEqual({ committed: true, cwd: "/a%b\nc" });
    expect(parseMarkerPayload("C1700000000,5:/x")).toEqual({ committed: true, cwd: "/x", stamp: 1700000000.5 });
  });
});

describe("buildInitScript", () => {
  it("re-executes as a login shell and fails with 126 on a bad cwd", () => {
    const script = buildInitScript({ ...plan, cwd: "/definitely/not/here" });
    expect(script).toContain('exec "$BASH" -l -c');
    let status = 0;
    try {
      execFileSync("bash", ["-c", script], { stdio: "pipe", input: "secret\n" });
    } catch (error) {
      status = (error as { status: number }).status;
    }
    expect(status).toBe(126);
  });
});
