/**
 * The optional `checkpoint` tool: a model's undo over the session's
 * checkpoints, through the registry's one way in (callTool), and as each
 * door (MCP listing, AI SDK, toolDefinitions) carries it when asked for.
 */

import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  callTool,
  CHECKPOINT_TOOLS,
  checkpointTool,
  createEnvironment,
  toolDefinitions,
  TOOLS,
  type CheckpointToolResult,
} from "../../../src/index.js";
import { toolSets } from "../../../src/tools/tool-sets.js";
import { FakeModalClient } from "../../fakes/fake-modal.js";
import { useSession } from "../../helpers/session.js";
import { useScratchDir } from "../../helpers/scratch.js";

const scratch = useScratchDir("sw-cptool-");
const workspace = (): string => join(scratch.path, "ws");
const open = useSession(async () => {
  mkdirSync(workspace());
  writeFileSync(join(workspace(), "a.txt"), "one\n");
  return createEnvironment({ workspace: workspace(), cwd: workspace() });
});

const call = async (args: unknown): Promise<CheckpointToolResult> =>
  (await callTool(checkpointTool, args, { session: open.session })) as CheckpointToolResult;

describe("the checkpoint tool", () => {
  it("creates, lists with its label, rolls files and shell state back, and releases", async () => {
    const result = await call({ action: "create", label: "before the edit" });
    if (result.checkpoint === undefined) throw new Error(JSON.stringify(result));
    const made = { checkpoint: result.checkpoint };
    expect(made.checkpoint).toMatchObject({
      id: expect.stringMatching(/^cp-[0-9a-f]{12}$/),
      label: "before the edit",
      holds: `shell state and the files under ${open.session.workspaceRoot}`,
    });
    expect(new Date(made.checkpoint.created_at).getTime()).not.toBeNaN();

    await open.session.execute("echo two > a.txt && touch b.txt && mkdir sub && cd sub && export STEP=2");
    const back = await call({ action: "rollback", id: made.checkpoint.id });
    expect(back).toMatchObject({ rolled_back: { id: made.checkpoint.id }, cwd: open.session.workspaceRoot });
    expect(readFileSync(join(workspace(), "a.txt"), "utf8")).toBe("one\n");
    expect(existsSync(join(workspace(), "b.txt"))).toBe(false);
    expect((await open.session.execute('echo "[$STEP]"; pwd')).output.trim()).toBe(`[]\n${open.session.workspaceRoot}`);

    expect(await call({ action: "list" })).toEqual({ checkpoints: [made.checkpoint] });
    expect(await call({ action: "release", id: made.checkpoint.id })).toEqual({ released: made.checkpoint.id });
    expect(await call({ action: "list" })).toEqual({ checkpoints: [] });
    expect(open.session.checkpoints()).toEqual([]);
  });

  it("says a checkpoint of a whole sandbox holds every file of it (modal, on its FAKE client)", async () => {
    const session = await createEnvironment({ backend: "modal", client: new FakeModalClient(), fastPath: false });
    try {
      const result = (await callTool(checkpointTool, { action: "create" }, { session })) as CheckpointToolResult;
      expect(result.checkpoint).toMatchObject({ holds: "shell state and every file of the sandbox" });
    } finally {
      await session.close();
    }
  });

  it("answers a model's mistakes with what to do, and changes nothing", async () => {
    const gone = await call({ action: "rollback", id: "cp-000000000000" });
    expect(gone).toEqual({
      error:
        "no checkpoint cp-000000000000 in this session (released, or never made here); there are none: create one first",
    });
    const noId = await call({ action: "release" });
    expect(noId.error).toMatch(/^Invalid arguments for checkpoint: .*id is required for release/);
    const stray = await call({ action: "list", label: "x" });
    expect(stray.error).toMatch(/label is only for create/);
    const badId = await call({ action: "rollback", id: "../etc" });
    expect(badId.error).toMatch(/cp- and 12 hex digits/);
    expect(open.session.checkpoints()).toEqual([]);
  });

  it("passes the session's refusal on as an error the model reads: no checkpoint while a command runs", async () => {
    const stop = new AbortController();
    const running = open.session.execute("sleep 600", { timeoutMs: 600_000, signal: stop.signal });
    try {
      const busy = await call({ action: "create" });
      expect(busy.error).toMatch(
        /^checkpoint failed: Cannot take a checkpoint while a command of the session runs \(1 running\); wait for it to finish$/,
      );
    } finally {
      stop.abort();
    }
    expect((await running).exitCode).toBe(130);
    expect(open.session.checkpoints()).toEqual([]);
  });
});

describe("the checkpoint tool set", () => {
  it("is not among the default tools, and joins them by name or by its export", () => {
    expect(TOOLS.map((tool) => tool.name)).not.toContain("checkpoint");
    expect(toolSets("shellwright,checkpoint").map((tool) => tool.name)).toEqual([
      ...TOOLS.map((tool) => tool.name),
      "checkpoint",
    ]);
    expect(CHECKPOINT_TOOLS).toEqual([checkpointTool]);
  });

  it("has a schema OpenAI's strict mode takes: every field listed, the optional ones nullable", () => {
    const [definition] = toolDefinitions({ format: "openai", tools: CHECKPOINT_TOOLS, strict: true });
    const parameters = definition!.function.parameters;
    expect(parameters.required).toEqual(["action", "id", "label"]);
    expect(parameters.additionalProperties).toBe(false);
    // A strict model sends null for what it leaves out: the tool takes it as absent.
    return call({ action: "list", id: null, label: null }).then((result) =>
      expect(result).toHaveProperty("checkpoints"),
    );
  });
});
