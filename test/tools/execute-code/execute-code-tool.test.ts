import { describe, expect, it } from "vitest";
import type { Environment, ExecuteOptions } from "../../../src/index.js";
import { createExecuteCodeTool } from "../../../src/tools/execute-code/execute-code-tool.js";
import { readFileTool } from "../../../src/tools/files/read-file.js";
import { executeCodeTool } from "../../../src/tools/registry.js";
import { runTool, type ToolDefinition } from "../../../src/tools/shared/tool-definition.js";
import { toolBackends, useToolFixture } from "../fixture.js";
import { aliveScript } from "../../helpers/processes.js";

/** Counts the session commands a tool runs, by what they are. */
function countingSession(session: Environment): { session: Environment; commands: string[] } {
  const commands: string[] = [];
  const proxy = new Proxy(session, {
    get(target, key) {
      if (key === "execute") {
        return (command: string, options?: ExecuteOptions) => {
          commands.push(command);
          return target.execute(command, options);
        };
      }
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { session: proxy, commands };
}

for (const backend of toolBackends) {
  describe.skipIf(!backend.enabled)(`execute_code on ${backend.name}`, () => {
    const t = useToolFixture(backend.create);
    const run = (code: string) => t.call(executeCodeTool, { code });
    // Scripts need Python 3 in the backend; an image without it is covered by the last test only.
    const skipWithoutPython = async (context: { skip: (note?: string) => void }) => {
      if ((await t.session.execute("command -v python3")).exitCode !== 0) context.skip("no python3 on this backend");
    };

    it("runs a script and returns its output", async (context) => {
      await skipWithoutPython(context);
      const result = await run("print('hello', 6 * 7)\nimport sys; print('err', file=sys.stderr)");
      expect(result).toMatchObject({ status: "success", output: "hello 42\nerr\n", tool_calls_made: 0 });
      expect(typeof result.duration_seconds).toBe("number");
    });

    it("calls the file tools from the script, one round trip per call", async (context) => {
      await skipWithoutPython(context);
      const { session, commands } = countingSession(t.session);
      const code = [
        `base = ${JSON.stringify(t.scratch)} + "/code"`,
        `print(write_file(base + "/a.txt", "alpha\\nbeta\\n")["bytes_written"])`,
        `for i in range(8):`,
        `    r = read_file(base + "/a.txt")`,
        `print(r["content"])`,
        `print(patch(path=base + "/a.txt", old_string="beta", new_string="gamma")["success"])`,
        `from shellwright_tools import search_files`,
        `print([m["line"] for m in search_files("gamma", path=base)["matches"]])`,
      ].join("\n");
      const result = await runTool(executeCodeTool, { code }, { session });
      expect(result).toMatchObject({
        status: "success",
        output: "11\n1|alpha\n2|beta\nTrue\n[2]\n",
        tool_calls_made: 11,
      });
      // Plumbing: setup, the script, and one pump per call plus the first; the rest are the tools' own commands.
      const pumps = commands.filter((c) => /cat \S+\/req \|\|/.test(c)).length;
      expect(pumps).toBeLessThanOrEqual(11 + 1);
      expect(await t.sh(`cat ${t.scratch}/code/a.txt`)).toBe("alpha\ngamma\n");
    });

    it("leaves the session's cwd and env where they were", async (context) => {
      await skipWithoutPython(context);
      await t.sh(`cd ${t.scratch} && export SW_CODE_VAR=kept`);
      const result = await run("import os\nprint(os.getcwd())\nprint(os.environ.get('SW_CODE_VAR'))\nos.chdir('/')");
      expect(result.output).toBe(`${t.scratch}\nkept\n`);
      expect(t.session.cwd).toBe(t.scratch);
      expect(await t.sh("pwd; echo $SW_CODE_VAR")).toBe(`${t.scratch}\nkept\n`);
    });

    it("limits the number of tool calls", async (context) => {
      await skipWithoutPython(context);
      const limited = createExecuteCodeTool({ tools: [readFileTool as ToolDefinition], maxToolCalls: 3 });
      const code = `for i in range(5):\n    print(read_file("/etc/hostname").get("error", "ok"))`;
      const result = await t.call(limited, { code });
      expect(result.tool_calls_made).toBe(5);
      expect((result.output as string).split("\n").slice(3, 5)).toEqual([
        "Tool call limit reached (3). No more tool calls allowed in this execution.",
        "Tool call limit reached (3). No more tool calls allowed in this execution.",
      ]);
    });

    it("reports errors, unknown tools and a failing script", async (context) => {
      await skipWithoutPython(context);
      const bad = await run("raise SystemExit(3)");
      expect(bad).toMatchObject({ status: "error", error: "Script exited with code 3" });
      const trace = await run("x = 1\nundefined_name");
      expect(trace.status).toBe("error");
      expect(trace.output).toMatch(/File "script.py", line 2[\s\S]*NameError/);
      const unknown = await run("from shellwright_tools import _call\nprint(_call('rm_rf', {})['error'])");
      expect(unknown.output).toBe(
        "Tool 'rm_rf' is not available in execute_code. Available: terminal, read_file, write_file, patch, search_files\n",
      );
      expect((await run("  ")).error).toBe("No code provided.");
    });

    it("times out, kills the script and stays usable", async (context) => {
      await skipWithoutPython(context);
      const quick = createExecuteCodeTool({ tools: [], timeoutMs: 4000 });
      const pidFile = `${t.scratch}/code-${Math.random().toString(16).slice(2)}.pid`;
      const code = `import os, time\nopen(${JSON.stringify(pidFile)}, "w").write(str(os.getpid()))\ntime.sleep(60)`;
      const result = await t.call(quick, { code });
      expect(result).toMatchObject({ status: "timeout", error: "Script timed out after 4s and was killed." });
      // The Python process is gone (a zombie counts as gone).
      expect(await t.sh(aliveScript([pidFile]))).toBe("");
      expect((await run("print('again')")).output).toBe("again\n");
    });

    it("is interrupted by the caller's signal", async (context) => {
      await skipWithoutPython(context);
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 1000);
      const result = await runTool(
        executeCodeTool,
        { code: "import time\ntime.sleep(60)" },
        { session: t.session, signal: controller.signal },
      );
      expect(result.status).toBe("interrupted");
    });

    it("lets a script whose channel is going or gone run to its end (the pump started late)", async (context) => {
      await skipWithoutPython(context);
      // The pump's first wait starts only once the script has removed the request
      // FIFO, and the directory goes a second later: as when a script ends and its
      // command's `rm -rf` is halfway through before a slow pump opens the FIFO.
      // That is the script ending, not a broken channel.
      let delayed = false;
      const session = new Proxy(t.session, {
        get(target, key) {
          if (key === "execute") {
            return async (command: string, options?: ExecuteOptions) => {
              const dir = /cat '([^']+)'\/req /.exec(command)?.[1];
              if (!delayed && dir !== undefined) {
                delayed = true;
                // Waited for, not timed: a loaded machine may start Python later than any fixed delay.
                const going = await target.execute(
                  `until [ ! -e '${dir}/req' ]; do sleep 0.05; done; [ -d '${dir}' ]`,
                  {
                    timeoutMs: 60_000,
                  },
                );
                expect(going.exitCode).toBe(0);
              }
              return target.execute(command, options);
            };
          }
          const value = Reflect.get(target, key, target) as unknown;
          return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
      const code = [
        "import os, shutil, time",
        'd = os.environ["SHELLWRIGHT_RPC_DIR"]',
        'os.unlink(os.path.join(d, "req"))',
        "time.sleep(1)",
        "shutil.rmtree(d)",
        "time.sleep(1)",
        'print("ran to the end")',
      ].join("\n");
      const result = await runTool(executeCodeTool, { code }, { session });
      expect(delayed).toBe(true);
      expect(result).toMatchObject({ status: "success", output: "ran to the end\n", tool_calls_made: 0 });
      expect(result.error).toBeUndefined();
    });

    it("serialises calls from several threads", async (context) => {
      await skipWithoutPython(context);
      const code = [
        "import threading",
        "out = []",
        "def work(i):",
        `    out.append(write_file(${JSON.stringify(t.scratch)} + f"/th/{i}.txt", str(i))["bytes_written"])`,
        "ts = [threading.Thread(target=work, args=(i,)) for i in range(6)]",
        "[x.start() for x in ts]; [x.join() for x in ts]",
        "print(sorted(out))",
      ].join("\n");
      expect(await run(code)).toMatchObject({ status: "success", output: "[1, 1, 1, 1, 1, 1]\n", tool_calls_made: 6 });
    });

    it("says so when the backend has no Python", async () => {
      const nopy = createExecuteCodeTool({ tools: [], python: "python-not-installed-here" });
      expect(await t.call(nopy, { code: "print(1)" })).toEqual({
        status: "error",
        error: `Python 3 is not available on the ${backend.name.replace(/-plain$/, "").replace(/-sandbox$/, "")} backend (no python-not-installed-here). Install it there or use the tools directly.`,
        tool_calls_made: 0,
        duration_seconds: 0,
      });
    });
  });
}
