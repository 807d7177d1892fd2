/** `shellwright serve --api hermes`: the flag takes the name, and the server it starts speaks hermes' API. */

import { afterAll, describe, expect, it } from "vitest";
import { parseServeArgs, serve } from "../../../src/cli/serve.js";
import { serveIo as io } from "../../helpers/serve-io.js";
import { eventually } from "../../helpers/processes.js";
import { scratchDir, TOKEN } from "../helpers.js";

describe("shellwright serve --api hermes", () => {
  const scratch = scratchDir();
  afterAll(() => scratch.remove());

  it("parses the name, and lists it in --help", async () => {
    const parsed = parseServeArgs(["--api", "shellwright,hermes"]);
    expect(parsed !== "help" && parsed.options.apis).toEqual(["shellwright", "hermes"]);
    const run = io({});
    expect(await serve(["--help"], run)).toBe(0);
    expect(run.out.join("")).toMatch(/--api APIS .*hermes/);
  });

  it("starts a server whose hermes routes create a sandbox and run a command in it", async () => {
    const run = io({ SHELLWRIGHT_GATEWAY_TOKEN: TOKEN });
    const exited = serve(["--port", "0", "--api", "hermes", "--allow-root", scratch.path], run);
    await eventually(() => run.out.length > 0, "the URL on stdout");
    const url = run.out[0]!.trim();
    const post = (path: string, body: unknown) =>
      fetch(`${url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const made = await post("/v1/sandboxes", { image: "python:3.11", cwd: scratch.path });
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: string };
    const execId = "cli-exec-1";
    const started = await post(`/v1/sandboxes/${id}/execs`, { execId, command: "pwd", cwd: scratch.path });
    let answer = (await started.json()) as Record<string, unknown>;
    await eventually(async () => {
      if (answer.status !== "running") return true;
      const poll = await fetch(`${url}/v1/sandboxes/${id}/execs/${execId}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      answer = (await poll.json()) as Record<string, unknown>;
      return answer.status !== "running";
    }, "the exec to end");
    expect(answer).toMatchObject({ status: "completed", output: `${scratch.path}\n`, returncode: 0 });
    // Only hermes' API was asked for: Shellwright's own routes are not served.
    expect((await fetch(`${url}/v1/sessions`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    run.stop();
    expect(await exited).toBe(0);
  });
});
