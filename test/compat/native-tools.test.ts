/**
 * The native tool sets (OpenAI's shell + apply_patch, Anthropic's bash + text
 * editor) on every compat backend, one session each: state kept across calls,
 * a timeout answered the provider's way with the tree killed, output bounds,
 * secrets masked, bad arguments refused in the provider's shape, nothing
 * written by a patch or an edit that fails, and bash's restart.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../../src/index.js";
import { createBashTool } from "../../src/tools/native/anthropic-bash.js";
import { anthropicTextEditorTool } from "../../src/tools/native/anthropic-text-editor.js";
import { openaiApplyPatchTool } from "../../src/tools/native/openai-apply-patch.js";
import { openaiShellTool } from "../../src/tools/native/openai-shell.js";
import { callTool } from "../../src/tools/registry.js";
import type { ToolDefinition, ToolResult } from "../../src/tools/shared/tool-definition.js";
import { toolSettings } from "../../src/tools/shared/tool-settings.js";
import { eventually } from "../helpers/processes.js";
import { compatBackends } from "./backends.js";

const SECRET = "sk-native-compat-7f3a9c1e5b";
const bash = createBashTool() as ToolDefinition;
const impatientBash = createBashTool({ timeoutMs: 3000 }) as ToolDefinition;

for (const backend of compatBackends) {
  describe.skipIf(!backend.enabled)(`native tool sets: ${backend.name}`, () => {
    let session: Environment;
    let dir: string;
    const call = (tool: ToolDefinition, args: unknown, settings?: Parameters<typeof toolSettings>[0]) =>
      callTool(tool, args, { session, ...(settings === undefined ? {} : { settings: toolSettings(settings) }) });
    const shell = (args: unknown, settings?: Parameters<typeof toolSettings>[0]) =>
      call(openaiShellTool as ToolDefinition, args, settings);
    const patch = (args: unknown) => call(openaiApplyPatchTool as ToolDefinition, args);
    const edit = (args: unknown) => call(anthropicTextEditorTool as ToolDefinition, args);
    /**
     * "gone" once the process no longer runs (a zombie not yet reaped counts as gone). Waited for: on a
     * backend whose kill runs as a command of its own, the call can answer before that command is done.
     */
    const gone = async (pidFile: string): Promise<string> => {
      const check = async () =>
        (
          await session.execute(
            `p=$(cat ${pidFile}); if [ -e /proc/$p ] && ! grep -q ') Z' /proc/$p/stat 2>/dev/null; then echo "alive $p"; else echo gone; fi`,
          )
        ).output;
      let last = await check();
      await eventually(async () => (last = await check()) === "gone\n", `${pidFile} to end`).catch(() => undefined);
      return last;
    };

    beforeAll(async () => {
      session = await backend.create({ env: { NATIVE_API_KEY: SECRET } });
      dir = (await session.execute("mktemp -d")).output.trim();
    });
    afterAll(async () => {
      await session?.execute(`rm -rf ${dir}`);
      await session?.close();
    });

    it("keeps the session's state across calls and tools, answers in each provider's shape", async () => {
      const first = await shell({ commands: [`cd ${dir}`, "export GREETING=hi; echo out; echo err >&2; exit 4"] });
      expect(first).toEqual({
        output: [
          { stdout: "", stderr: "", outcome: { type: "exit", exit_code: 0 } },
          { stdout: "out\n", stderr: "err\n", outcome: { type: "exit", exit_code: 4 } },
        ],
      });
      expect(await call(bash, { command: 'echo "$GREETING from $PWD"' })).toEqual({
        content: `hi from ${dir}`,
        exit_code: 0,
      });
      // Relative paths of both file tools start in the session's cwd.
      expect(await patch({ type: "create_file", path: "notes.txt", diff: "+alpha\n+beta\n+" })).toEqual({
        status: "completed",
        output: "Created notes.txt",
      });
      expect(await edit({ command: "str_replace", path: "notes.txt", old_str: "beta", new_str: "gamma" })).toEqual({
        content: "Successfully replaced text at exactly one location.",
      });
      expect(await edit({ command: "view", path: "notes.txt" })).toEqual({ content: "1: alpha\n2: gamma" });
    });

    it("answers a timeout the provider's way and kills the command's tree", async () => {
      // 3 s: time enough for the command to print and note its pid before the timeout, on a slow machine too.
      const command = "echo started; sleep 600 & echo $! > t.pid; sleep 600";
      // The two providers' calls at once: each waits out its own 3 s.
      const [timed, bashTimed] = await Promise.all([
        shell({ commands: [command, "echo never"], timeout_ms: 3000 }),
        call(impatientBash, { command: command.replace("t.pid", "b.pid") }),
      ]);
      expect(timed).toEqual({ output: [{ stdout: "started\n", stderr: "", outcome: { type: "timeout" } }] });
      expect(await gone(`${dir}/t.pid`)).toBe("gone\n");
      expect(bashTimed).toEqual({ error: "Error: Command timed out after 3 seconds\nstarted", exit_code: 124 });
      expect(await gone(`${dir}/b.pid`)).toBe("gone\n");
    });

    it("bounds output, saving the whole of it, and masks secrets", async () => {
      const big = await shell({ commands: ["seq 1 20000; echo $NATIVE_API_KEY >&2"], max_output_length: 2000 });
      const [entry] = big.output as { stdout: string; stderr: string }[];
      expect(entry!.stdout.length).toBeLessThan(2000 + 300);
      expect(entry!.stdout).toMatch(
        /^1\n2\n[\s\S]*OUTPUT TRUNCATED - \d+ bytes omitted out of 108894 total. Full output saved to (\S+);[\s\S]*\n20000\n$/,
      );
      expect(entry!.stderr).toBe("[REDACTED]\n");
      const saved = /Full output saved to (\S+);/.exec(entry!.stdout)![1]!;
      expect((await session.execute(`wc -l < ${saved}`)).output.trim()).toBe("20000");
      const bashed = await call(bash, { command: "seq 1 20000; echo $NATIVE_API_KEY" }, { inlineOutputChars: 1000 });
      expect(String(bashed.content).length).toBeLessThan(1000 + 300);
      expect(bashed.content).toMatch(/\n\[REDACTED\]$/);
      await session.execute(`printf 'key=%s\\n' "$NATIVE_API_KEY" > ${dir}/env.txt`);
      expect(await edit({ command: "view", path: `${dir}/env.txt` })).toEqual({ content: "1: key=[REDACTED]" });
    });

    it("refuses bad arguments in each provider's error shape", async () => {
      const message = "Invalid arguments for shell: commands must have at least 1 items; fix it and call shell again.";
      expect(await shell({ commands: [] })).toEqual({
        output: [{ stdout: "", stderr: message, outcome: { type: "exit", exit_code: null } }],
        error: message,
      });
      expect(await patch({ type: "rename_file", path: "x" })).toMatchObject({
        status: "failed",
        output: expect.stringMatching(/^Invalid arguments for apply_patch: type must be one of/),
      });
      expect(await call(bash, {})).toEqual({ error: "Error: no command provided." });
      expect(await edit({ command: "str_replace", path: "notes.txt" })).toEqual({
        error: "Error: Parameter `old_str` is required for command: str_replace",
      });
      expect(await edit({ command: "view", path: `${dir}/absent` })).toEqual({ error: "Error: File not found" });
    });

    it("writes nothing when a patch or an edit fails", async () => {
      const file = `${dir}/keep.py`;
      const before = "def a():\n    return 1\n\ndef b():\n    return 1\n";
      await session.execute(`cat > ${file}`, { stdin: before });
      const failed: ToolResult = await patch({
        type: "update_file",
        path: file,
        diff: "@@ def a():\n-    return 1\n+    return 2\n@@ def c():\n-    return 1\n+    return 3\n",
      });
      expect(failed).toMatchObject({
        status: "failed",
        output: `${file}: hunk 2 (@@ def c():): could not find the @@ line "def c():". Nothing was changed.`,
      });
      expect(
        await edit({ command: "str_replace", path: file, old_str: "    return 1", new_str: "    return 9" }),
      ).toEqual({
        error: "Error: Found 2 matches for replacement text. Please provide more context to make a unique match.",
      });
      expect((await session.execute(`cat ${file}`)).output).toBe(before);
    });

    it("restart ends what bash started, however it detached, and returns to the state bash first found", async () => {
      const started = await call(bash, {
        command:
          `setsid sleep 600 > /dev/null 2>&1 & echo $! > ${dir}/r.pid; ` +
          `( while :; do sleep 1; done ) > /dev/null 2>&1 & echo $! > ${dir}/loop.pid; cd /tmp; export STAY=no`,
      });
      expect(started).toMatchObject({ exit_code: 0 });
      expect((await session.execute(`cat ${dir}/r.pid ${dir}/loop.pid`)).output).toMatch(/^\d+\n\d+\n$/);
      expect(await call(bash, { restart: true })).toEqual({ content: "Bash session restarted" });
      expect(await gone(`${dir}/r.pid`)).toBe("gone\n");
      expect(await gone(`${dir}/loop.pid`)).toBe("gone\n");
      // The first bash call of this session ran in `dir`, with GREETING set by the shell tool before it.
      expect(await call(bash, { command: 'echo "$PWD ${GREETING-} ${STAY-unset} ${__sw_st-none}"' })).toEqual({
        content: `${dir} hi unset none`,
        exit_code: 0,
      });
    });
  });
}
