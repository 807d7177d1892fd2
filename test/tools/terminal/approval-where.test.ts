/**
 * Where the approval hook is consulted: where a command acts on a real
 * machine (Environment.actsOnHost), never in a box, whatever its name.
 */

import { afterAll, describe, expect, it } from "vitest";
import { createEnvironment, type Environment } from "../../../src/index.js";
import { callTool } from "../../../src/tools/registry.js";
import { toolSettings } from "../../../src/tools/shared/tool-settings.js";
import { FakeModalClient } from "../../fakes/fake-modal.js";

const open: Environment[] = [];

afterAll(async () => {
  for (const env of open.splice(0)) await env.close();
});

async function asked(session: Environment): Promise<{ asked: number; output: unknown }> {
  let count = 0;
  const approve = (): string => {
    count++;
    return "not here";
  };
  const result = await callTool("terminal", { command: "echo ran" }, { session, settings: toolSettings({ approve }) });
  return { asked: count, output: result };
}

describe("the approval hook", () => {
  it("is consulted on the local backend, which acts on this machine", async () => {
    const session = await createEnvironment({ backend: "local" });
    open.push(session);
    expect(session.actsOnHost).toBe(true);
    const r = await asked(session);
    expect(r.asked).toBe(1);
    expect(r.output).toMatchObject({ status: "blocked" });
  });

  it("is not consulted in a box (modal, through its FAKE client): the command runs", async () => {
    const session = await createEnvironment({ backend: "modal", client: new FakeModalClient() });
    open.push(session);
    expect(session.actsOnHost).toBe(false);
    const r = await asked(session);
    expect(r.asked).toBe(0);
    expect(JSON.stringify(r.output)).toContain("ran");
  });
});
