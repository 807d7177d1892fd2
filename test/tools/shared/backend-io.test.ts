import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createEnvironment } from "../../../src/index.js";
import { quotePath, runOnBackend } from "../../../src/tools/shared/backend-io.js";
import { toolBackends, useToolFixture } from "../fixture.js";

describe("quotePath", () => {
  it("leaves ~ for the backend and quotes the rest", () => {
    for (const [given, wanted] of [
      ["~", "~"],
      ["~/a b", "~/'a b'"],
      ["~root/x", "~root/'x'"],
      ["/tmp/it's", "'/tmp/it'\\''s'"],
      ["~; rm -rf /", "'~; rm -rf /'"],
    ] as const)
      expect(quotePath(given), given).toBe(wanted);
  });
});

for (const backend of toolBackends) {
  describe.skipIf(!backend.enabled)(`runOnBackend on ${backend.name}`, () => {
    const t = useToolFixture(backend.create);

    it("returns stdout byte-exact, the exit code and stderr apart", async () => {
      const result = await runOnBackend(t.session, "printf 'a\\000b\\377\\n'; echo oops >&2; exit 3");
      expect(result.stdout).toEqual(Buffer.from([0x61, 0, 0x62, 0xff, 0x0a]));
      expect(result.exitCode).toBe(3);
      expect(result.stderr).toBe("oops\n");
    });

    for (const compress of [true, false]) {
      it(`carries results far beyond the session's output limit (${compress ? "gzip" : "plain"} chunks)`, async () => {
        const data = randomBytes(700_000);
        await t.sh(`base64 -d > ${t.scratch}/random.bin`, data.toString("base64"));
        // A private TMPDIR, to see that the parked temp file is gone afterwards.
        const tmp = `${t.scratch}/tmp-${compress}`;
        await t.sh(`mkdir ${tmp} && export TMPDIR=${tmp}`);
        try {
          const result = await runOnBackend(t.session, `cat ${t.scratch}/random.bin`, { compress });
          expect(result.stdout.equals(data)).toBe(true);
          expect(await t.sh(`ls -A ${tmp}`)).toBe("");
        } finally {
          await t.sh("unset TMPDIR");
        }
      });
    }

    it("still works when the terminal's cwd is gone", async () => {
      await t.sh(`mkdir ${t.scratch}/doomed && cd ${t.scratch}/doomed`);
      await t.sh(`rmdir ${t.scratch}/doomed`);
      // The session falls back to the nearest existing ancestor and says so on
      // stderr; the byte-exact stdout must not pick that notice up.
      const result = await runOnBackend(t.session, "echo hi");
      expect(result.stdout.toString()).toBe("hi\n");
      await t.session.execute(`cd ${t.scratch}`);
    });

    it("leaves the session's env and cwd alone", async () => {
      await t.sh(`cd ${t.scratch} && export SW_IO_VAR=1`);
      await runOnBackend(t.session, "cd / && export SW_IO_VAR=2");
      expect(await t.sh("pwd; echo $SW_IO_VAR")).toBe(`${t.scratch}\n1\n`);
    });
  });
}

describe("runOnBackend with a small output limit", () => {
  it("measures the limit once and still moves everything", async () => {
    const session = await createEnvironment({ backend: "local", maxOutputBytes: 5000 });
    try {
      const data = randomBytes(50_000);
      const result = await runOnBackend(session, "cat", { stdin: data });
      expect(result.stdout.equals(data)).toBe(true);
    } finally {
      await session.close();
    }
  });
});
