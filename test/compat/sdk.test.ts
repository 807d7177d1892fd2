/**
 * The SDK surface (docs/sdk.md) on every backend: files(env), spawn(env, …),
 * portUrl(env, …) and stdout/stderr apart. One session per backend, no
 * sleeps: every wait is for an event or a process's end.
 */

import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callTool,
  FileError,
  files,
  isShellwrightError,
  portUrl,
  spawn,
  type Environment,
  type FileEvent,
} from "../../src/index.js";
import { Files } from "../../src/sdk/files.js";
import { COMPAT_PORT, compatBackends } from "./backends.js";

/**
 * The backends whose ports this process reaches. The others say why not: the gateway forwards no
 * port, the local sandbox has a network of its own, the suite's docker container has none (its
 * published ports are tested in test/backends/docker/ports.test.ts), and a Shellwright host's E2B
 * API has no port proxy.
 */
const SERVES_PORTS =
  /^(local|local-plain|ssh|ssh-plain|apptainer|apptainer-plain|modal|modal-plain|daytona|daytona-plain)$/;
const NO_PORTS: Record<string, RegExp> = {
  gateway: /gateway forwards commands, not ports/,
  "gateway-plain": /gateway forwards commands, not ports/,
  "local-sandbox": /sandbox\.network "host"/,
  "local-sandbox-plain": /sandbox\.network "host"/,
  docker: /network: false/,
  "docker-plain": /network: false/,
  e2b: /reached through sandboxUrl/,
  "e2b-plain": /reached through sandboxUrl/,
};

const sha = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** Resolves with the first event `match` accepts, among those `watch` delivers. */
function eventSink(): {
  onEvent: (event: FileEvent) => void;
  next: (match: (e: FileEvent) => boolean) => Promise<FileEvent>;
} {
  const seen: FileEvent[] = [];
  const waiting: { match: (e: FileEvent) => boolean; resolve: (e: FileEvent) => void }[] = [];
  return {
    onEvent(event) {
      seen.push(event);
      for (const waiter of [...waiting])
        if (waiter.match(event)) {
          waiting.splice(waiting.indexOf(waiter), 1);
          waiter.resolve(event);
        }
    },
    next(match) {
      const found = seen.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiting.push({ match, resolve }));
    },
  };
}

for (const backend of compatBackends) {
  describe.skipIf(!backend.enabled)(`sdk: ${backend.name}`, () => {
    let env: Environment;
    let dir: string;

    beforeAll(async () => {
      env = await backend.create();
      dir = (await env.execute("mktemp -d")).output.trim();
      expect(dir).toMatch(/^\//);
    });
    afterAll(async () => {
      await env.execute(`rm -rf ${dir}`);
      await env.close();
    });

    describe("files", () => {
      it("writes and reads back exact bytes, text and a stream larger than one round trip", async () => {
        const fs = files(env);
        const bytes = Uint8Array.from([0, 1, 2, 0xff, 0xfe, 10, 13, 10, 0x80]);
        expect(await fs.write(`${dir}/a/b/bin`, bytes, { mode: 0o600 })).toEqual({
          path: `${dir}/a/b/bin`,
          bytesWritten: 9,
        });
        expect(await fs.read(`${dir}/a/b/bin`, { format: "bytes" })).toEqual(bytes);
        expect((await fs.stat(`${dir}/a/b/bin`)).mode).toBe(0o600);
        await fs.write(`${dir}/t.txt`, "héllo\nno newline at the end");
        expect(await fs.read(`${dir}/t.txt`)).toBe("héllo\nno newline at the end");

        // 700 kB from a stream, in pieces and chunks far smaller than the defaults (4 MiB each way),
        // so that every boundary is crossed: three upload pieces, four read chunks.
        const small = new Files(env, { denyPaths: [] }, { readChunkBytes: 200_000, uploadPieceBytes: 300_000 });
        const big = Buffer.alloc(700_000);
        for (let i = 0; i < big.length; i++) big[i] = (i * 7919) % 251;
        async function* source(): AsyncGenerator<Uint8Array> {
          for (let at = 0; at < big.length; at += 70_000) yield big.subarray(at, at + 70_000);
        }
        expect((await small.write(`${dir}/big`, source())).bytesWritten).toBe(big.length);
        const stream = await small.read(`${dir}/big`, { format: "stream" });
        const parts: Uint8Array[] = [];
        for await (const part of stream) parts.push(part);
        expect(parts.map((part) => part.length)).toEqual([200_000, 200_000, 200_000, 100_000]);
        expect(sha(Buffer.concat(parts))).toBe(sha(big));
        expect(sha(await fs.read(`${dir}/big`, { format: "bytes" }))).toBe(sha(big));
        // Nothing left beside it: the temp files were renamed or removed.
        expect((await fs.list(dir)).map((e) => e.name).sort()).toEqual(["a", "big", "t.txt"]);
      });

      it("lists, stats, makes and removes, and says why it cannot", async () => {
        const fs = files(env);
        const root = `${dir}/tree`;
        expect(await fs.mkdir(`${root}/x/y`)).toBe(true);
        expect(await fs.mkdir(`${root}/x`)).toBe(false);
        await fs.write(`${root}/x/f`, "12345");
        await env.execute(`ln -s x/f ${root}/link`);
        const top = await fs.list(root);
        expect(top.map((e) => [e.name, e.type])).toEqual([
          ["link", "symlink"],
          ["x", "dir"],
        ]);
        expect(top[0]!.symlinkTarget).toBe("x/f");
        expect((await fs.list(root, { depth: 3 })).map((e) => e.path)).toEqual([
          `${root}/link`,
          `${root}/x`,
          `${root}/x/f`,
          `${root}/x/y`,
        ]);
        const stat = await fs.stat(`${root}/x/f`);
        expect(stat).toMatchObject({ name: "f", path: `${root}/x/f`, type: "file", size: 5 });
        expect(stat.modifiedAt.getTime()).toBeGreaterThan(Date.now() - 3_600_000);
        expect(await fs.exists(`${root}/link`)).toBe(true);
        expect(await fs.exists(`${root}/nothing`)).toBe(false);

        // A symlink is removed, not its target.
        await fs.remove(`${root}/link`);
        expect(await fs.exists(`${root}/x/f`)).toBe(true);
        await expect(fs.remove(`${root}/x`)).rejects.toMatchObject({ reason: "not_empty" });
        await fs.remove(`${root}/x/y`);
        await fs.remove(`${root}/x`, { recursive: true });
        expect(await fs.exists(`${root}/x`)).toBe(false);

        await expect(fs.read(`${root}/missing`)).rejects.toMatchObject({ code: "FILE_FAILED", reason: "not_found" });
        await expect(fs.read(root)).rejects.toMatchObject({ reason: "is_directory" });
        await expect(fs.list(`${dir}/t.txt`)).rejects.toMatchObject({ reason: "not_directory" });
        await expect(fs.remove(`${root}/missing`)).rejects.toBeInstanceOf(FileError);
        await expect(fs.mkdir(`${root}/p/q`, { parents: false })).rejects.toMatchObject({ reason: "not_found" });
      });

      it("keeps every write, removal and mkdir inside safeRoot, also through a symlink", async () => {
        const root = `${dir}/jail`;
        await files(env).mkdir(root);
        await env.execute(`mkdir -p ${dir}/outside && ln -s ${dir}/outside ${root}/escape`);
        const fs = files(env, { safeRoot: root });
        await fs.write(`${root}/in.txt`, "ok");
        const attempts = [
          () => fs.write(`${dir}/outside/x`, "no"),
          () => fs.write(`${root}/escape/x`, "no"),
          () => fs.mkdir(`${root}/escape/d`),
          () => fs.remove(`${dir}/t.txt`),
        ];
        for (const attempt of attempts) {
          const error = await attempt().catch((e: unknown) => e);
          expect(isShellwrightError(error) && (error as FileError).reason).toBe("denied");
        }
        expect((await env.execute(`ls -A ${dir}/outside; test -e ${dir}/t.txt && echo kept`)).output).toBe("kept\n");
      });

      it("renames: over a file, a symlink as the link, into new parents; safeRoot guards both ends", async () => {
        const fs = files(env);
        const root = `${dir}/mv`;
        await fs.write(`${root}/a.txt`, "first");
        await fs.write(`${root}/b.txt`, "second");
        const moved = await fs.rename(`${root}/a.txt`, `${root}/b.txt`);
        expect(moved).toMatchObject({ path: `${root}/b.txt`, type: "file", size: 5 });
        expect(await fs.read(`${root}/b.txt`)).toBe("first");
        expect(await fs.exists(`${root}/a.txt`)).toBe(false);
        await env.execute(`ln -s b.txt ${root}/link`);
        expect(await fs.rename(`${root}/link`, `${root}/deep/er/link`)).toMatchObject({ type: "symlink" });
        expect(await fs.read(`${root}/b.txt`)).toBe("first");
        await expect(fs.rename(`${root}/none`, `${root}/x`)).rejects.toMatchObject({ reason: "not_found" });
        const owner = (await env.execute("id -un; id -gn")).output.trim().split("\n");
        expect(await fs.stat(`${root}/b.txt`)).toMatchObject({ owner: owner[0], group: owner[1] });
        expect((await fs.list(root))[0]).toMatchObject({ owner: owner[0], group: owner[1] });

        const jailed = files(env, { safeRoot: `${root}/deep` });
        for (const attempt of [
          () => jailed.rename(`${root}/b.txt`, `${root}/deep/b.txt`),
          () => jailed.rename(`${root}/deep/er/link`, `${root}/out`),
        ]) {
          await expect(attempt()).rejects.toMatchObject({ reason: "denied" });
        }
        expect(await fs.exists(`${root}/b.txt`)).toBe(true);
        expect(await fs.exists(`${root}/deep/er/link`)).toBe(true);
      });

      it("watches a directory: creations, changes and removals", async () => {
        const fs = files(env);
        const watched = `${dir}/watched`;
        await fs.mkdir(`${watched}/sub`);
        await fs.write(`${watched}/old`, "1");
        const sink = eventSink();
        const watcher = await fs.watch(watched, sink.onEvent, { intervalMs: 50 });
        try {
          await fs.write(`${watched}/sub/new`, "x");
          await env.execute(`printf more >> ${watched}/old`);
          expect(await sink.next((e) => e.path === `${watched}/old`)).toMatchObject({ type: "modify" });
          await fs.remove(`${watched}/old`);
          expect(await sink.next((e) => e.path === `${watched}/sub/new`)).toEqual({
            type: "create",
            path: `${watched}/sub/new`,
            entryType: "file",
            sizeBytes: 1,
          });
          expect(await sink.next((e) => e.type === "remove" && e.path.endsWith("/old"))).toEqual({
            type: "remove",
            path: `${watched}/old`,
            entryType: "file",
            sizeBytes: "1more".length,
          });
        } finally {
          await watcher.close();
        }
        await watcher.ended;
        await expect(fs.watch(`${dir}/nowhere`, () => undefined)).rejects.toMatchObject({ reason: "not_found" });
      });
    });

    describe("spawn", () => {
      it("runs in the background: stdin in, output streamed, exit code out, visible to the process tool", async () => {
        const seen: string[] = [];
        const proc = await spawn(env, 'echo "in $PWD"; while read -r l; do echo "got $l"; done; echo bye >&2; exit 3', {
          cwd: dir,
          onOutput: (text) => seen.push(text),
        });
        expect(proc.id).toMatch(/^proc_/);
        expect(proc.status).toBe("running");
        const listed = await callTool("process", { action: "list" }, { session: env });
        expect(listed.processes?.map((p) => p.session_id)).toContain(proc.id);

        const stream = proc.output()[Symbol.asyncIterator]();
        let streamed = "";
        await proc.write("one\n");
        while (!streamed.includes("got one\n")) streamed += (await stream.next()).value ?? "";
        await proc.closeStdin();
        const result = await proc.wait();
        expect(result).toEqual({ status: "exited", exitCode: 3, output: `in ${dir}\ngot one\nbye\n` });
        for (let next = await stream.next(); next.done !== true; next = await stream.next()) streamed += next.value;
        expect(streamed).toBe(`in ${dir}\ngot one\nbye\n`);
        expect(seen.join("")).toBe(`in ${dir}\ngot one\nbye\n`);
        await expect(proc.write("late")).rejects.toMatchObject({ code: "PROCESS_FAILED" });
        // The session stayed where it was.
        expect((await env.execute("pwd")).output).not.toBe(`${dir}\n`);
      });

      it("kills the process and everything it started, a setsid child too", async () => {
        const proc = await spawn(
          env,
          `setsid sleep 300 & echo $! > ${dir}/p1; sleep 300 & echo $! > ${dir}/p2; echo started; wait`,
        );
        for await (const text of proc.output()) if (text.includes("started")) break;
        const pids = (await env.execute(`cat ${dir}/p1 ${dir}/p2`)).output.trim().split("\n");
        expect(pids).toHaveLength(2);
        await proc.kill();
        expect(proc.status).toBe("killed");
        const alive = await env.execute(
          `for p in ${pids.join(" ")}; do [ -e /proc/$p ] && ! grep -q ') Z' /proc/$p/stat && echo "alive $p"; done; true`,
        );
        expect(alive.output).toBe("");
        expect(await proc.wait({ timeoutMs: 0 })).toMatchObject({ status: "killed" });
      });
    });

    describe("portUrl", () => {
      it("gives a URL this process reaches a server in the session at, or says why there is none", async () => {
        await expect(portUrl(env, 0)).rejects.toMatchObject({ code: "INVALID_OPTION", option: "port" });
        if (!SERVES_PORTS.test(backend.name)) {
          const error = await portUrl(env, COMPAT_PORT).catch((e: unknown) => e);
          expect(error).toMatchObject({ code: "UNSUPPORTED" });
          expect((error as Error).message).toMatch(NO_PORTS[backend.name]!);
          return;
        }
        await files(env).write(`${dir}/served.txt`, "served by the session");
        const server = await spawn(env, `exec python3 -u -m http.server ${COMPAT_PORT} --bind 127.0.0.1`, { cwd: dir });
        try {
          for await (const text of server.output()) if (text.includes("Serving HTTP")) break;
          const { url, headers } = await portUrl(env, COMPAT_PORT);
          expect(url).toMatch(/^https?:\/\//);
          if (backend.name.startsWith("daytona"))
            expect(headers).toEqual({ "x-daytona-preview-token": "fake-preview-token" });
          const response = await fetch(`${url}/served.txt`, { headers });
          expect(response.status).toBe(200);
          expect(await response.text()).toBe("served by the session");
          // Asked again: the same address while it works.
          expect((await portUrl(env, COMPAT_PORT)).url).toBe(url);
        } finally {
          await server.kill();
        }
      });
    });

    describe("stdout and stderr apart", () => {
      it("keeps each stream's bytes in order, beside the merged output, and leaves the default merged", async () => {
        const merged = await env.execute("echo out; echo err >&2; printf o2; printf e2 >&2; exit 3");
        expect(merged).toMatchObject({ output: "out\nerr\no2e2", exitCode: 3 });
        expect(merged).not.toHaveProperty("stdout");

        const seen = { out: "", err: "", all: "" };
        const r = await env.execute("echo out; echo err >&2; printf o2; printf 'é2' >&2; exit 3", {
          onStdout: (t) => (seen.out += t),
          onStderr: (t) => (seen.err += t),
          onOutput: (t) => (seen.all += t),
        });
        expect(r).toMatchObject({ stdout: "out\no2", stderr: "err\né2", exitCode: 3, truncated: false });
        expect(seen).toMatchObject({ out: "out\no2", err: "err\né2" });
        // The merged output holds both, each stream in its own order (across streams: as they arrived).
        expect(r.output.length).toBe("out\no2err\né2".length);
        expect(r.output.replace("err\n", "").replace("é2", "")).toBe("out\no2");
        expect(seen.all).toBe(r.output);
        const quiet = await env.execute("true", { separateStreams: true });
        expect(quiet).toMatchObject({ output: "", stdout: "", stderr: "", exitCode: 0 });
      });

      it("cannot be ended early by a forged marker, nor held open by a background child", async () => {
        const forged =
          "__SHELLWRIGHT_END_00112233445566778899aabbccddeeff__E__SHELLWRIGHT_END_00112233445566778899aabbccddeeff__";
        const r = await env.execute(`echo '${forged}' >&2; echo after >&2; echo '${forged}'; echo tail`, {
          separateStreams: true,
        });
        expect(r).toMatchObject({ stderr: `${forged}\nafter\n`, stdout: `${forged}\ntail\n`, exitCode: 0 });
        // A child keeps both pipes: the call still ends with its command, without what the child writes later.
        const held = await env.execute("(sleep 3; echo late; echo late >&2) & echo done; echo gone >&2", {
          separateStreams: true,
        });
        expect(held).toMatchObject({ stdout: "done\n", stderr: "gone\n", exitCode: 0 });
      });

      it("keeps both within one maxOutputBytes: a lone error line beside a flood is kept whole", async () => {
        const r = await env.execute("seq 1 60000; echo THE-ERROR >&2; seq 1 60000", { separateStreams: true });
        expect(r.stderr).toBe("THE-ERROR\n");
        expect(r.truncated).toBe(true);
        expect(r.stdout).toMatch(
          /^1\n2\n3\n[\s\S]*\[OUTPUT TRUNCATED - \d+ bytes omitted out of 697788 total\][\s\S]*59999\n60000\n$/,
        );
        expect(r.output).toContain("THE-ERROR\n");
        // Two floods share the budget: together they keep what one would (50 000 bytes, the default).
        const both = await env.execute(
          "head -c 300000 /dev/zero | tr '\\0' a; head -c 300000 /dev/zero | tr '\\0' b >&2",
          {
            separateStreams: true,
          },
        );
        const kept = (text: string, letter: string) =>
          (text.replace(/\.\.\. \[OUTPUT TRUNCATED[^\]]*\] \.\.\./g, "").match(new RegExp(letter, "g")) ?? []).length;
        expect(kept(both.stdout!, "a") + kept(both.stderr!, "b")).toBeLessThanOrEqual(50_000);
        expect(kept(both.stderr!, "b")).toBeGreaterThanOrEqual(15_000);
        expect(kept(both.output, "a") + kept(both.output, "b")).toBe(kept(both.stdout!, "a") + kept(both.stderr!, "b"));
      });

      it("keeps interleaved writes apart, each stream whole and in order, a character split by the other stream too", async () => {
        const seen = { out: "", err: "", all: "" };
        const r = await env.execute(
          // 400 lines on each stream, one write each, alternating; then a character cut in two by a write to stderr.
          "for i in $(seq 1 400); do echo o$i; echo e$i >&2; done; printf '\\303'; printf x >&2; printf '\\251'",
          {
            onStdout: (t) => (seen.out += t),
            onStderr: (t) => (seen.err += t),
            onOutput: (t) => (seen.all += t),
          },
        );
        const lines = (prefix: string) => Array.from({ length: 400 }, (_, i) => `${prefix}${i + 1}\n`).join("");
        expect(r).toMatchObject({ stdout: `${lines("o")}é`, stderr: `${lines("e")}x`, exitCode: 0, truncated: false });
        expect(seen).toMatchObject({ out: r.stdout, err: r.stderr, all: r.output });
        // The merged output is the two interleaved (across streams as they arrived): taking stderr's
        // lines out leaves stdout in its order.
        expect(r.output.length).toBe(r.stdout!.length + r.stderr!.length);
        expect(r.output.replace(/e\d+\n/g, "").replace("x", "")).toBe(r.stdout);
      });

      it("carries a large stderr alone: every byte streamed, the result bounded, an exact one kept whole", async () => {
        let streamed = 0;
        const big = await env.execute("head -c 1000000 /dev/zero | tr '\\0' e >&2; echo done", {
          onStderr: (t) => (streamed += t.length),
        });
        expect(streamed).toBe(1_000_000);
        expect(big).toMatchObject({ stdout: "done\n", exitCode: 0, truncated: true });
        expect(big.stderr).toMatch(
          /^e+\n\n\.\.\. \[OUTPUT TRUNCATED - \d+ bytes omitted out of 1000000 total\] \.\.\.\n\ne+$/,
        );
        // Within the budget, the bytes as written (and seq's own stdout untouched by it).
        const exact = await env.execute("seq 1 5000 >&2", { separateStreams: true });
        const expected = Array.from({ length: 5000 }, (_, i) => `${i + 1}\n`).join("");
        expect(exact).toMatchObject({ stdout: "", stderr: expected, exitCode: 0, truncated: false });
      });

      it("ends a command that closes its stdout or its stderr early, with the other stream and the state kept", async () => {
        const noStdout = await env.execute(`cd ${dir}; exec >&-; echo e1 >&2; echo e2 >&2; exit 4`, {
          separateStreams: true,
        });
        expect(noStdout).toMatchObject({ stdout: "", stderr: "e1\ne2\n", exitCode: 4 });
        expect((await env.execute("pwd")).output).toBe(`${dir}\n`);
        const noStderr = await env.execute("echo o1; exec 2>&-; echo o2; echo lost >&2; exit 5", {
          separateStreams: true,
        });
        expect(noStderr).toMatchObject({ stdout: "o1\no2\n", stderr: "", exitCode: 5 });
        const neither = await env.execute("exec >&- 2>&-; exit 6", { separateStreams: true });
        expect(neither).toMatchObject({ stdout: "", stderr: "", exitCode: 6 });
      });

      it("passes the command's own look-alikes of the backends' exit and group lines through as text", async () => {
        const lookAlikes =
          "\n__SHELLWRIGHT_EXIT__0__\n__SHELLWRIGHT_GROUP_1__\n__SHELLWRIGHT_EXIT_00112233445566778899aabb_0__\n";
        const r = await env.execute(`printf '${lookAlikes.replace(/\n/g, "\\n")}' >&2; echo real >&2; exit 7`, {
          separateStreams: true,
        });
        expect(r).toMatchObject({ stdout: "", stderr: `${lookAlikes}real\n`, exitCode: 7 });
      });

      it("stops on an interrupt with what each stream said so far", async () => {
        const controller = new AbortController();
        const r = await env.execute("echo o; echo ready >&2; exec sleep 60", {
          signal: controller.signal,
          onStderr: (t) => {
            if (t.includes("ready")) controller.abort();
          },
        });
        expect(r).toMatchObject({ interrupted: true, exitCode: 130, stderr: "ready\n" });
        expect(r.stdout).toMatch(/^(o\n)?$/);
      });
    });
  });
}
