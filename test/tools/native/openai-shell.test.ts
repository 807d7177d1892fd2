/**
 * OpenAI's `shell` tool on a local session, beyond what the compat suite
 * runs on every backend: stdout and stderr kept apart in order, a syntax
 * error on stderr, the output budget split between the two streams, the
 * approval hook and an interrupt stopping the list, a timeout over the
 * maximum refused, and no stderr file left behind.
 */

import { describe, expect, it } from "vitest";
import { openaiShellTool } from "../../../src/tools/native/openai-shell.js";
import { scratchDir } from "../../../src/tools/native/scratch-dir.js";
import type { ToolDefinition } from "../../../src/tools/shared/tool-definition.js";
import { useLocalTool } from "../../helpers/local-tool.js";

const tool = openaiShellTool as ToolDefinition;

describe("shell (OpenAI)", () => {
  const local = useLocalTool(tool);
  const shell = local.call;

  it("keeps stdout and stderr apart, a syntax error on stderr, and runs the next command after a failure", async () => {
    const result = await shell({ commands: ["echo a; echo b >&2; echo c", "if then", "echo after"] });
    expect(result).toEqual({
      output: [
        { stdout: "a\nc\n", stderr: "b\n", outcome: { type: "exit", exit_code: 0 } },
        {
          stdout: "",
          stderr: expect.stringMatching(/syntax error near unexpected token `then'/),
          outcome: { type: "exit", exit_code: 2 },
        },
        { stdout: "after\n", stderr: "", outcome: { type: "exit", exit_code: 0 } },
      ],
    });
    // Each command's stderr file is read and removed at once.
    const dir = await scratchDir(local.session);
    expect((await local.session.execute(`ls -A ${dir} | grep -c stderr-`)).output.trim()).toBe("0");
  });

  it("splits max_output_length between the streams, each cut to its head and tail, and echoes it", async () => {
    const result = await shell({
      commands: ["seq 1 3000; seq 1 3000 >&2"],
      max_output_length: 400,
    });
    const [entry] = result.output as { stdout: string; stderr: string }[];
    expect(result.max_output_length).toBe(400);
    expect(entry!.stdout).toMatch(/^1\n2\n[\s\S]*OUTPUT TRUNCATED[\s\S]*\n3000\n$/);
    expect(entry!.stderr).toMatch(/^1\n2\n[\s\S]*OUTPUT TRUNCATED[\s\S]*\n3000\n$/);
    // The notices aside, 400 characters in all, stderr at least a quarter of it.
    const shown = (text: string) => text.replace(/\n\n\.\.\. \[OUTPUT TRUNCATED[^\]]*\] \.\.\.\n\n/, "").length;
    expect(shown(entry!.stdout) + shown(entry!.stderr)).toBeLessThanOrEqual(400);
    expect(shown(entry!.stderr)).toBeGreaterThanOrEqual(100);
  });

  it("asks the approval hook for each command and stops at a refusal, in the provider's shape", async () => {
    const seen: string[] = [];
    const approve = ({ command }: { command: string }) => (seen.push(command), !command.includes("rm "));
    const result = await shell({ commands: ["echo one", "rm -rf /tmp/x", "echo three"] }, { approve });
    expect(result.output).toEqual([
      { stdout: "one\n", stderr: "", outcome: { type: "exit", exit_code: 0 } },
      {
        stdout: "",
        stderr: "Command denied by the approval policy. Ask the user to run it, or rephrase the command.",
        outcome: { type: "exit", exit_code: null },
      },
    ]);
    expect(seen).toEqual(["echo one", "rm -rf /tmp/x"]);
  });

  it("stops at an interrupt: the command is killed (exit 130) and no later command runs", async () => {
    const controller = new AbortController();
    const pending = shell({ commands: ["echo started; sleep 600", "echo never"] }, undefined, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 500));
    controller.abort();
    expect((await pending).output).toEqual([
      { stdout: "started\n", stderr: "", outcome: { type: "exit", exit_code: 130 } },
    ]);
  });

  it("refuses a timeout above the foreground maximum, and an empty command", async () => {
    expect(await shell({ commands: ["true"], timeout_ms: 700_000 })).toEqual({
      output: [
        {
          stdout: "",
          stderr: "timeout_ms 700000 is above the maximum of 600000 ms.",
          outcome: { type: "exit", exit_code: null },
        },
      ],
      error: "timeout_ms 700000 is above the maximum of 600000 ms.",
    });
    expect(await shell({ commands: ["  "] })).toMatchObject({
      output: [{ stderr: "Invalid arguments for shell: commands.0: a command is empty; fix it and call shell again." }],
    });
  });
});
