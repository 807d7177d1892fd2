import { describe, expect, it } from "vitest";
import { boundedCopy, createReadFileTool, readFileTool } from "../../../src/tools/files/read-file.js";
import { runOnBackend } from "../../../src/tools/shared/backend-io.js";
import { toolBackends, useToolFixture } from "../fixture.js";

for (const backend of toolBackends) {
  describe.skipIf(!backend.enabled)(`read_file on ${backend.name}`, () => {
    const t = useToolFixture(backend.create);
    const read = (args: Record<string, unknown>) => t.call(readFileTool, args);

    it("numbers lines as N|content and says how many there are", async () => {
      await t.sh(`printf 'alpha\\nbeta\\ngamma' > ${t.scratch}/three.txt`);
      expect(await read({ path: `${t.scratch}/three.txt` })).toEqual({
        path: `${t.scratch}/three.txt`,
        content: "1|alpha\n2|beta\n3|gamma",
        total_lines: 3,
        file_size: 16,
        truncated: false,
      });
    });

    it("pages with offset and limit and gives a hint for the next page", async () => {
      await t.sh(`seq 1 1200 | sed 's/^/row /' > ${t.scratch}/rows.txt`);
      const first = await read({ path: `${t.scratch}/rows.txt` });
      expect(first.total_lines).toBe(1200);
      expect(first.truncated).toBe(true);
      expect((first.content as string).split("\n")).toHaveLength(500);
      expect(first.hint).toBe("Use offset=501 to continue reading (showing 1-500 of 1200 lines)");
      const middle = await read({ path: `${t.scratch}/rows.txt`, offset: 1000, limit: 3 });
      expect(middle.content).toBe("1000|row 1000\n1001|row 1001\n1002|row 1002");
      const last = await read({ path: `${t.scratch}/rows.txt`, offset: 1199, limit: 10 });
      expect(last.content).toBe("1199|row 1199\n1200|row 1200");
      expect(last.truncated).toBe(false);
      expect(last.hint).toBeUndefined();
    });

    it("clamps limit to 2000 and resolves relative paths from the session cwd", async () => {
      await t.sh(`seq 1 2500 > ${t.scratch}/many.txt`);
      await t.sh(`cd ${t.scratch}`);
      const result = await read({ path: "many.txt", limit: 5000 });
      expect((result.content as string).split("\n")).toHaveLength(2000);
      expect(result.hint).toContain("offset=2001");
      expect(t.session.cwd).toBe(t.scratch);
    });

    it("cuts long lines with a marker, strips a BOM on page 1 and a CR at line ends", async () => {
      await t.sh(
        `{ printf '\\357\\273\\277first\\r\\n'; head -c 5000 /dev/zero | tr '\\0' y; printf '\\n'; } > ${t.scratch}/long.txt`,
      );
      const result = await read({ path: `${t.scratch}/long.txt` });
      const [first, second] = (result.content as string).split("\n");
      expect(first).toBe("1|first");
      expect(second).toBe(`2|${"y".repeat(2000)}... [truncated]`);
    });

    it("refuses device files, directories and binary content, and detects images", async () => {
      expect((await read({ path: "/dev/zero" })).error).toBe(
        "Cannot read '/dev/zero': this is a device file that would block or produce infinite output.",
      );
      expect((await read({ path: "/dev/null" })).error).toMatch(/not a regular file/);
      expect((await read({ path: t.scratch })).error).toMatch(/is a directory/);
      await t.sh(`printf 'ab\\000cd' > ${t.scratch}/blob.dat`);
      const blob = await read({ path: `${t.scratch}/blob.dat` });
      expect(blob.is_binary).toBe(true);
      expect(blob.error).toMatch(/^Binary file - cannot display as text/);
      expect((await read({ path: `${t.scratch}/x.so` })).error).toMatch(/^Cannot read binary file .*\(\.so\)/);
      await t.sh(`printf '\\211PNG\\r\\n' > ${t.scratch}/pic.png`);
      expect(await read({ path: `${t.scratch}/pic.png` })).toMatchObject({ is_image: true, file_size: 6 });
    });

    it("refuses never-ending files at once, however they are reached", async () => {
      for (const path of ["/proc/kmsg", "/dev/kmsg", "/dev/urandom", "/proc/self/fd/0"]) {
        expect((await read({ path })).error, path).toBe(
          `Cannot read '${path}': this is a device file that would block or produce infinite output.`,
        );
      }
      // Reading /proc/kmsg as root blocks for ever: by its resolved name it is refused before any read.
      await t.sh(`ln -sf /proc/kmsg ${t.scratch}/kmsg-link && mkfifo ${t.scratch}/fifo`);
      expect((await read({ path: `${t.scratch}/kmsg-link` })).error).toBe(
        `Cannot read '${t.scratch}/kmsg-link': it is a generated (special) file and resolves to '/proc/kmsg', a stream that never ends (a kernel log or trace pipe); it could block or produce infinite output. Use the terminal with a bound, e.g. \`head -c 4096 '${t.scratch}/kmsg-link'\` or \`timeout 5 cat '${t.scratch}/kmsg-link'\`.`,
      );
      expect((await read({ path: `${t.scratch}/fifo` })).error).toMatch(
        /not a regular file \(a device, FIFO or socket\)/,
      );
      // A "regular" /proc file of size 0 that goes on for gigabytes: the bounded copy stops it.
      expect((await read({ path: "/proc/self/pagemap" })).error).toMatch(
        /^Cannot read '\/proc\/self\/pagemap': it is a generated \(special\) file and it produced more than/,
      );
    });

    it("still reads the /proc files people look at (bounded copy, same result format)", async () => {
      const cpu = await read({ path: "/proc/cpuinfo" });
      expect(cpu.content).toMatch(/^1\|processor\s*:/);
      expect(cpu.total_lines).toBeGreaterThan(0);
      expect((await read({ path: "/proc/meminfo" })).content).toMatch(/^1\|MemTotal:/);
      expect((await read({ path: "/proc/self/status", limit: 1 })).content).toMatch(/^1\|Name:/);
    });

    it("gives up on a file whose read blocks (the bounded copy's time limit)", async () => {
      // A FIFO nobody writes to blocks its reader: a stand-in for a pseudo file that blocks.
      await t.sh(`mkfifo ${t.scratch}/quiet`);
      // One second instead of the tool's three: what is tested is that the limit ends the copy, not its length.
      const script = [`__sw_p=${t.scratch}/quiet; __sw_rp=$__sw_p`, ...boundedCopy(1), "echo 'kind file'"].join("\n");
      const result = await runOnBackend(t.session, script);
      expect(result.stdout.toString()).toBe("kind blocks\n");
      // The same without timeout(1): the watchdog ends the copy.
      await t.sh(
        `mkdir ${t.scratch}/bin && for c in head mktemp wc sleep rm; do ln -s "$(command -v $c)" ${t.scratch}/bin/$c; done`,
      );
      const bare = await runOnBackend(t.session, `PATH=${t.scratch}/bin\n${script}`);
      expect(bare.stdout.toString()).toBe("kind blocks\n");
    });

    it("answers a missing file with up to five similar names", async () => {
      await t.sh(
        `mkdir ${t.scratch}/sim && cd ${t.scratch}/sim && touch config.yaml config.yml configs.json unrelated.md settings.py && cd -`,
      );
      const result = await read({ path: `${t.scratch}/sim/config.yam` });
      expect(result.error).toBe(`File not found: ${t.scratch}/sim/config.yam`);
      const similar = result.similar_files as string[];
      expect(similar.length).toBeGreaterThan(0);
      expect(similar.length).toBeLessThanOrEqual(5);
      expect(similar).toContain(`${t.scratch}/sim/config.yaml`);
      expect(similar).not.toContain(`${t.scratch}/sim/unrelated.md`);
    });

    it("refuses a read of more than maxChars characters with advice", async () => {
      await t.sh(`seq 1 300 | sed 's/$/ padding padding padding/' > ${t.scratch}/wide.txt`);
      const small = createReadFileTool({ maxChars: 1000 });
      const refused = await t.call(small, { path: `${t.scratch}/wide.txt` });
      expect(refused.error).toMatch(
        /^Read produced (more than )?[\d,]+ characters which exceeds the safety limit \(1,000 chars\)\. Use offset and limit/,
      );
      expect(refused.total_lines).toBe(300);
      expect((await t.call(small, { path: `${t.scratch}/wide.txt`, limit: 10 })).content).toMatch(/^1\|1 padding/);
      // The default limit of 100 000 characters: 80 000 pass, a page of 4 000 000 is refused, not cut.
      await t.sh(`for i in $(seq 1 40); do head -c 1990 /dev/zero | tr '\\0' z; echo; done > ${t.scratch}/heavy.txt`);
      expect((await read({ path: `${t.scratch}/heavy.txt` })).content).toBeDefined();
      await t.sh(`for i in $(seq 1 60); do cat ${t.scratch}/heavy.txt; done > ${t.scratch}/heavier.txt`);
      expect((await read({ path: `${t.scratch}/heavier.txt`, limit: 2000 })).error).toMatch(
        /exceeds the safety limit \(100,000 chars\)/,
      );
    });

    it("rejects bad arguments with a message naming them", async () => {
      expect((await read({ path: "x", offset: 0 })).error).toMatch(/^Invalid arguments for read_file: offset/);
      expect((await read({})).error).toMatch(/path/);
    });

    it("reads an empty file and refuses an offset past the end", async () => {
      await t.sh(`: > ${t.scratch}/empty.txt; printf 'one\\n' > ${t.scratch}/one.txt`);
      expect(await read({ path: `${t.scratch}/empty.txt` })).toMatchObject({ content: "", total_lines: 0 });
      expect((await read({ path: `${t.scratch}/one.txt`, offset: 5 })).error).toMatch(
        /offset 5 is past the end of the file \(1 lines\)/,
      );
    });
  });
}
