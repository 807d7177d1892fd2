import { describe, expect, it } from "vitest";
import { patchTool } from "../../../src/tools/patch/patch-tool.js";
import { writeFileTool } from "../../../src/tools/files/write-file.js";
import { toolBackends, useToolFixture } from "../fixture.js";

for (const backend of toolBackends) {
  describe.skipIf(!backend.enabled)(`patch on ${backend.name}`, () => {
    const t = useToolFixture(backend.create);
    const patch = (args: Record<string, unknown>) => t.call(patchTool, args);
    const text = async (path: string) => (await t.rawBytes(path)).toString("utf8");

    it("replaces a unique string, returns a unified diff and keeps the mode", async () => {
      const file = `${t.scratch}/edit.sh`;
      await t.sh(`printf '#!/bin/sh\\necho hello\\necho bye\\n' > ${file} && chmod 751 ${file}`);
      const result = await patch({ path: file, old_string: "echo hello", new_string: "echo goodbye" });
      expect(result).toEqual({
        success: true,
        path: file,
        replacements: 1,
        // An absolute path reads as git writes it: `a/tmp/…`, never `a//tmp/…`.
        diff: `--- a${file}\n+++ b${file}\n@@ -1,3 +1,3 @@\n #!/bin/sh\n-echo hello\n+echo goodbye\n echo bye\n`,
      });
      expect(await text(file)).toBe("#!/bin/sh\necho goodbye\necho bye\n");
      expect((await t.sh(`stat -c %a ${file}`)).trim()).toBe("751");
    });

    it("refuses an ambiguous match without changing the file, and replaces all when asked", async () => {
      const file = `${t.scratch}/twice.txt`;
      await t.sh(`printf 'a=1\\na=1\\n' > ${file}`);
      expect(await patch({ path: file, old_string: "a=1", new_string: "a=2" })).toEqual({
        error: "Found 2 matches for old_string. Provide more context to make it unique, or use replace_all=true.",
      });
      expect(await text(file)).toBe("a=1\na=1\n");
      expect(await patch({ path: file, old_string: "a=1", new_string: "a=2", replace_all: true })).toMatchObject({
        success: true,
        replacements: 2,
      });
      expect(await text(file)).toBe("a=2\na=2\n");
    });

    it("says how to recover when old_string is not there", async () => {
      await t.sh(`printf 'x\\n' > ${t.scratch}/nf.txt`);
      const result = await patch({ path: `${t.scratch}/nf.txt`, old_string: "completely different", new_string: "y" });
      expect(result.error).toBe(
        "Could not find a match for old_string in the file\n\n[Hint: old_string not found. Use read_file to verify the current content, or search_files to locate the text.]",
      );
      expect((await patch({ path: `${t.scratch}/missing.txt`, old_string: "a", new_string: "b" })).error).toBe(
        `File not found: ${t.scratch}/missing.txt`,
      );
    });

    it("keeps CRLF line endings and the BOM, matching LF old_string", async () => {
      const file = `${t.scratch}/win.txt`;
      await t.sh(`printf '\\357\\273\\277one\\r\\ntwo\\r\\nthree\\r\\n' > ${file}`);
      expect(await patch({ path: file, old_string: "one\ntwo", new_string: "one\n2" })).toMatchObject({
        success: true,
      });
      expect((await t.rawBytes(file)).toString("latin1")).toBe("\xef\xbb\xbfone\r\n2\r\nthree\r\n");
    });

    it("patches a 10 000-line file correctly (no truncation)", async () => {
      const file = `${t.scratch}/big.txt`;
      await t.sh(`seq 1 10000 | sed 's/^/line /' > ${file}`);
      expect(await patch({ path: file, old_string: "line 9999\n", new_string: "line NINE\n" })).toMatchObject({
        success: true,
        replacements: 1,
      });
      const lines = (await text(file)).split("\n");
      expect(lines).toHaveLength(10001);
      expect(lines[9998]).toBe("line NINE");
      expect(lines[9999]).toBe("line 10000");
      expect(lines[0]).toBe("line 1");
      const v4a = `*** Begin Patch\n*** Update File: ${file}\n@@ line 4999\n-line 5000\n+line FIVE\n*** End Patch`;
      expect(await patch({ mode: "patch", patch: v4a })).toMatchObject({ success: true, files_modified: [file] });
      const after = (await text(file)).split("\n");
      expect(after).toHaveLength(10001);
      expect(after[4999]).toBe("line FIVE");
      expect(after[9998]).toBe("line NINE");
    });

    it("applies a V4A patch that adds, updates, deletes and moves", async () => {
      const dir = `${t.scratch}/v4a`;
      await t.sh(
        `mkdir -p ${dir} && cd ${dir} && printf 'keep\\nold\\n' > upd.txt && printf 'bye\\n' > del.txt && printf 'moving\\n' > mv.txt && printf 'a\\nb\\n' > ren.txt && cd /`,
      );
      const v4a = [
        "*** Begin Patch",
        `*** Add File: ${dir}/sub/new.txt`,
        "+fresh",
        `*** Update File: ${dir}/upd.txt`,
        "@@",
        " keep",
        "-old",
        "+new",
        `*** Delete File: ${dir}/del.txt`,
        `*** Move File: ${dir}/mv.txt -> ${dir}/moved/mv.txt`,
        `*** Update File: ${dir}/ren.txt`,
        `*** Move to: ${dir}/renamed.txt`,
        "@@",
        "-b",
        "+B",
        "*** End Patch",
      ].join("\n");
      const result = await patch({ mode: "patch", patch: v4a });
      expect(result).toMatchObject({
        success: true,
        files_created: [`${dir}/sub/new.txt`],
        files_modified: [`${dir}/upd.txt`],
        files_deleted: [`${dir}/del.txt`],
        files_moved: [`${dir}/mv.txt -> ${dir}/moved/mv.txt`, `${dir}/ren.txt -> ${dir}/renamed.txt`],
      });
      expect(result.diff).toContain("-old\n+new\n");
      expect(await t.sh(`cd ${dir} && find . -type f | sort && cat sub/new.txt upd.txt moved/mv.txt renamed.txt`)).toBe(
        "./moved/mv.txt\n./renamed.txt\n./sub/new.txt\n./upd.txt\nfresh\nkeep\nnew\nmoving\na\nB\n",
      );
    });

    it("rejects a patch with one bad hunk and changes nothing at all", async () => {
      const dir = `${t.scratch}/v4a-bad`;
      await t.sh(`mkdir -p ${dir} && printf 'one\\n' > ${dir}/a.txt && printf 'two\\n' > ${dir}/b.txt`);
      const before = await t.sh(`cd ${dir} && ls -la --time-style=+%s . | sort; md5sum *`);
      const v4a = [
        "*** Begin Patch",
        `*** Update File: ${dir}/a.txt`,
        "-one",
        "+ONE",
        `*** Add File: ${dir}/c.txt`,
        "+three",
        `*** Delete File: ${dir}/b.txt`,
        `*** Update File: ${dir}/b.txt`,
        "-this line is not in the file",
        "+x",
        "*** End Patch",
      ].join("\n");
      const result = await patch({ mode: "patch", patch: v4a });
      expect(result.success).toBe(false);
      expect(result.error).toMatch(/b\.txt: hunk 1: could not find the lines to change/);
      expect(result.error).toMatch(/Nothing was changed\.$/);
      expect(await t.sh(`cd ${dir} && ls -la --time-style=+%s . | sort; md5sum *`)).toBe(before);
    });

    it("refuses to patch protected paths and to overwrite with Add File", async () => {
      await t.sh(`printf 'x\\n' > ${t.scratch}/exists.txt`);
      const add = await patch({
        mode: "patch",
        patch: `*** Begin Patch\n*** Add File: ${t.scratch}/exists.txt\n+y\n*** End Patch`,
      });
      expect(add.error).toMatch(/already exists/);
      const etc = await patch({ path: "/etc/hostname", old_string: "a", new_string: "b" });
      expect(etc.error).toMatch(/^Write denied: '\/etc\/hostname' is a protected system\/credential file/);
      expect((await patch({ mode: "patch", patch: "garbage" })).error).toMatch(/^Invalid V4A patch: line 1/);
    });

    it("refuses to write over a change made after the file was read", async () => {
      // write_file then patch with a stale view is fine; the guard is the hash check inside the write.
      const file = `${t.scratch}/race.txt`;
      await t.call(writeFileTool, { path: file, content: "v1\n" });
      const { writeAtomic, sha256 } = await import("../../../src/tools/files/atomic-write.js");
      const stale = sha256(Buffer.from("v0\n"));
      await expect(writeAtomic(t.session, file, Buffer.from("v2\n"), { expectedSha256: stale })).rejects.toThrow(
        /changed on disk since it was read; nothing was written/,
      );
      expect(await text(file)).toBe("v1\n");
    });

    it("never loses a write_file that races a patch (40 rounds): the patch reports a conflict instead", async () => {
      const dir = `${t.scratch}/races`;
      await t.sh(
        `mkdir -p ${dir} && for i in $(seq 0 39); do printf 'head\\nold line\\ntail\\n' > ${dir}/r-$i.txt; done`,
      );
      const patchResults: Array<Record<string, unknown>> = [];
      for (let batch = 0; batch < 4; batch++) {
        const rounds = Array.from({ length: 10 }, (_, k) => {
          const i = batch * 10 + k;
          const path = `${dir}/r-${i}.txt`;
          return Promise.all([
            patch({ path, old_string: "old line", new_string: "patched line" }),
            t.call(writeFileTool, { path, content: `written ${i}\n` }),
          ]);
        });
        for (const [patched, written] of await Promise.all(rounds)) {
          expect(written).toMatchObject({ bytes_written: expect.any(Number) });
          patchResults.push(patched);
        }
      }
      for (const result of patchResults) {
        if (result.success !== true)
          expect(result.error).toMatch(/changed on disk since it was read; nothing was written|Could not find a match/);
      }
      // write_file replaces the whole file, so whatever the order, its content is what must be there.
      const finals = await t.sh(`for i in $(seq 0 39); do cat ${dir}/r-$i.txt; done`);
      expect(finals).toBe(Array.from({ length: 40 }, (_, i) => `written ${i}\n`).join(""));
    }, 180_000);
  });
}
