import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidOptionError } from "../../../src/index.js";
import { createWriteFileTool, writeFileTool } from "../../../src/tools/files/write-file.js";
import { toolBackends, useToolFixture } from "../fixture.js";

for (const backend of toolBackends) {
  describe.skipIf(!backend.enabled)(`write_file on ${backend.name}`, () => {
    const t = useToolFixture(backend.create);
    const write = (args: Record<string, unknown>) => t.call(writeFileTool, args);

    it("round-trips random content byte-exact: no newline added, quotes, heredoc words and markers intact", async () => {
      const tricky = [
        "",
        "abc",
        "abc\n",
        "\n\n",
        "EOF\n'\"$HOME`x`\\\n",
        "__SHELLWRIGHT_STDIN_x\nEOF",
        "ü€😀\r\n\t",
        "x".repeat(300_000),
      ];
      for (const [i, content] of tricky.entries()) {
        const path = `${t.scratch}/rt-${i}.txt`;
        expect(await write({ path, content })).toMatchObject({ bytes_written: Buffer.byteLength(content) });
        expect((await t.rawBytes(path)).equals(Buffer.from(content, "utf8"))).toBe(true);
      }
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: "binary", maxLength: 2000 }), async (content) => {
          const path = `${t.scratch}/rt-random.txt`;
          await write({ path, content });
          return (await t.rawBytes(path)).equals(Buffer.from(content, "utf8"));
        }),
        { numRuns: 10 },
      );
    });

    it("writes any size: 3 MB of random text arrives whole", async () => {
      const content = randomBytes(1_500_000).toString("hex");
      const path = `${t.scratch}/large.txt`;
      expect(await write({ path, content })).toMatchObject({ bytes_written: 3_000_000 });
      expect((await t.sh(`sha256sum < ${path}`)).split(" ")[0]).toBe(
        (await import("node:crypto")).createHash("sha256").update(content).digest("hex"),
      );
    });

    it("creates parent directories and says so", async () => {
      const path = `${t.scratch}/deep/er/file.txt`;
      expect(await write({ path, content: "x" })).toEqual({ path, bytes_written: 1, dirs_created: true });
      expect(await write({ path, content: "y" })).toEqual({ path, bytes_written: 1, dirs_created: false });
    });

    it("keeps the existing file's mode, CRLF endings and BOM; a new file gets the umask's mode", async () => {
      const path = `${t.scratch}/styled.txt`;
      await t.sh(`printf '\\357\\273\\277a\\r\\nb\\r\\n' > ${path} && chmod 640 ${path}`);
      const result = await write({ path, content: "one\ntwo\n" });
      expect(result).toMatchObject({
        bytes_written: 13,
        line_endings: "CRLF (kept from the existing file)",
        bom: "kept from the existing file",
      });
      expect((await t.rawBytes(path)).toString("latin1")).toBe("\xef\xbb\xbfone\r\ntwo\r\n");
      expect((await t.sh(`stat -c %a ${path}`)).trim()).toBe("640");
      await write({ path: `${t.scratch}/fresh.txt`, content: "n" });
      const expected = (0o666 & ~Number.parseInt((await t.sh("umask")).trim(), 8)).toString(8);
      expect((await t.sh(`stat -c %a ${t.scratch}/fresh.txt`)).trim()).toBe(expected);
    });

    it("writes through a symlink to its target, atomically, leaving no temp file", async () => {
      await t.sh(
        `mkdir -p ${t.scratch}/ln && printf 'old' > ${t.scratch}/ln/target.txt && ln -sf target.txt ${t.scratch}/ln/link.txt`,
      );
      const result = await write({ path: `${t.scratch}/ln/link.txt`, content: "new" });
      expect(result.resolved_path).toBe(`${t.scratch}/ln/target.txt`);
      expect(await t.sh(`cd ${t.scratch}/ln && readlink link.txt && cat target.txt && ls -A | wc -l`)).toBe(
        "target.txt\nnew2\n",
      );
    });

    it("resolves relative paths and ~ on the backend", async () => {
      await t.sh(`cd ${t.scratch}`);
      await write({ path: "rel/x.txt", content: "r" });
      expect(await t.sh(`cat ${t.scratch}/rel/x.txt`)).toBe("r");
      const home = (await t.sh("echo $HOME")).trim();
      const safe = createWriteFileTool({ denyPaths: [], safeRoot: t.scratch });
      expect((await t.call(safe, { path: "~/sw-outside.txt", content: "x" })).error).toBe(
        `Write denied: '${home}/sw-outside.txt' is outside the allowed directory '${t.scratch}'.`,
      );
    });

    it("refuses sensitive paths, also through a symlink, and writes nothing", async () => {
      const home = (await t.sh("echo $HOME")).trim();
      for (const path of [
        "~/.ssh/authorized_keys",
        "~/.bashrc",
        "/etc/passwd",
        "/etc/cron.d/x",
        `${home}/.aws/credentials`,
      ]) {
        const result = await write({ path, content: "pwned" });
        expect(result.error, path).toMatch(/^Write denied: '.*' is a protected system\/credential file\./);
      }
      await t.sh(`ln -sf /etc/hosts ${t.scratch}/innocent.txt`);
      expect((await write({ path: `${t.scratch}/innocent.txt`, content: "x" })).error).toBe(
        "Write denied: '/etc/hosts' is a protected system/credential file. Use the terminal if you really need to change it.",
      );
      expect(await t.sh("grep -c pwned /etc/passwd || true")).toBe("0\n");
    });

    it("takes a custom deny list and safe root, validated up front", async () => {
      const custom = createWriteFileTool({ denyPaths: [`${t.scratch}/locked/`], safeRoot: t.scratch });
      expect((await t.call(custom, { path: `${t.scratch}/locked/a`, content: "x" })).error).toMatch(/protected/);
      expect((await t.call(custom, { path: "/tmp/sw-elsewhere.txt", content: "x" })).error).toMatch(
        /outside the allowed directory/,
      );
      expect(await t.call(custom, { path: `${t.scratch}/open/a`, content: "x" })).toMatchObject({ bytes_written: 1 });
      expect(() => createWriteFileTool({ denyPaths: ["relative/path"] })).toThrow(InvalidOptionError);
      expect(() => createWriteFileTool({ safeRoot: " " })).toThrow(/safeRoot must be a non-empty path/);
    });

    it("refuses the new deny-list entries: aliases, git config and credentials, ~/.local/bin, autostart", async () => {
      for (const path of [
        "~/.bash_aliases",
        "~/.gitconfig",
        "~/.git-credentials",
        "~/.config/git/credentials",
        "~/.local/bin/ls",
        "~/.config/autostart/evil.desktop",
      ]) {
        const result = await write({ path, content: "pwned" });
        expect(result.error, path).toMatch(/^Write denied: '.*' is a protected system\/credential file\./);
      }
      expect(await write({ path: `${t.scratch}/.local/bin/tool`, content: "x" })).toMatchObject({ bytes_written: 1 });
    });

    it("writes into the directory the guard approved, not one swapped in after the check", async () => {
      // The state a swap leaves between the guard's resolve and the write: the approved path now leads elsewhere.
      await t.sh(`mkdir -p ${t.scratch}/elsewhere && ln -s elsewhere ${t.scratch}/swapped`);
      const { writeAtomic } = await import("../../../src/tools/files/atomic-write.js");
      await expect(writeAtomic(t.session, `${t.scratch}/swapped/f.txt`, Buffer.from("x"), {})).rejects.toThrow(
        `the directory of '${t.scratch}/swapped/f.txt' was replaced while writing (it now leads to '${t.scratch}/elsewhere'); nothing was written`,
      );
      await expect(
        writeAtomic(t.session, `${t.scratch}/swapped/new/deeper/f.txt`, Buffer.from("x"), {}),
      ).rejects.toThrow(/was replaced while writing/);
      expect(await t.sh(`ls -A ${t.scratch}/elsewhere | wc -l`)).toBe("0\n");
    });

    it("keeps every write inside safeRoot while a directory and a symlink are swapped (60 races, 0 escapes)", async () => {
      const jail = `${t.scratch}/jail`;
      const outside = `${t.scratch}/jail-outside`;
      const stop = `${t.scratch}/jail-stop`;
      await t.sh(`mkdir -p ${jail}/d ${outside}`);
      const guarded = createWriteFileTool({ denyPaths: [], safeRoot: jail });
      // The adversary: jail/d flips between the real directory and a symlink out of the jail until told to stop.
      const swapper = t.session.execute(
        `cd ${jail} && while [ ! -e ${stop} ]; do mv -T d d.real; ln -s ../jail-outside d; rm -f d; mv -T d.real d; done 2>/dev/null; echo stopped`,
        { isolated: true },
      );
      const results: Array<Record<string, unknown>> = [];
      try {
        for (let batch = 0; batch < 6; batch++) {
          const calls = Array.from({ length: 10 }, (_, i) =>
            t.call(guarded, { path: `${jail}/d/f-${batch * 10 + i}.txt`, content: "x" }),
          );
          results.push(...(await Promise.all(calls)));
        }
      } finally {
        await t.sh(`touch ${stop}`);
        expect((await swapper).output).toContain("stopped");
      }
      for (const result of results) {
        if (result.error === undefined) expect(result).toMatchObject({ bytes_written: 1 });
        else expect(result.error).toMatch(/outside the allowed directory|was replaced while writing|could not write/);
      }
      expect(await t.sh(`ls -A ${outside} | wc -l`)).toBe("0\n");
      // Every write that reported success is inside the jail (find does not follow the symlink out).
      const landed = Number((await t.sh(`find ${jail} -name 'f-*' | wc -l`)).trim());
      expect(landed).toBe(results.filter((r) => r.error === undefined).length);
      // The swapper keeps a core busy: alone 10-37 s per backend here, past 60 s once under the full suite.
    }, 180_000);

    it("refuses directories and non-regular files, and bad arguments", async () => {
      expect((await write({ path: t.scratch, content: "x" })).error).toMatch(/is a directory/);
      expect((await write({ path: "/dev/null", content: "x" })).error).toMatch(/not a regular file/);
      expect((await write({ path: "a\nb", content: "x" })).error).toMatch(
        /^Invalid arguments for write_file: path: a path cannot contain a newline/,
      );
      expect((await write({ path: "x" })).error).toMatch(/content/);
    });
  });
}
