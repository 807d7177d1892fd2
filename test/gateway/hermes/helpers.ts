/** A real gateway serving hermes' sandbox API beside Shellwright's, and hermes' calls to it over HTTP. */

import { randomUUID } from "node:crypto";
import type { Gateway } from "../../../src/index.js";
import { eventually } from "../../helpers/processes.js";
import { api, startTestGateway, type ApiAnswer } from "../helpers.js";

export function startHermesGateway(options: Parameters<typeof startTestGateway>[0] = {}): Promise<Gateway> {
  return startTestGateway({ apis: ["shellwright", "hermes"], ...options });
}

/** A create as hermes' client sends it (its fields and defaults), in `cwd`. */
export function createBody(cwd: string): Record<string, unknown> {
  return {
    image: "python:3.11",
    cwd,
    cpu: 1,
    memoryMiB: 5120,
    timeoutMs: 3_600_000,
    idleTimeoutMs: 300_000,
    persistentFilesystem: true,
    logicalKey: "default",
  };
}

export async function createSandbox(gateway: Gateway, cwd: string): Promise<string> {
  const made = await api(gateway, "POST", "/v1/sandboxes", createBody(cwd), {
    headers: { "x-idempotency-key": randomUUID() },
  });
  if (made.status !== 201) throw new Error(`create failed: ${made.status} ${JSON.stringify(made.body)}`);
  return made.body.id as string;
}

/** Starts an exec the way hermes' client does (cwd: the sandbox's start directory, unless given). */
export function startExec(
  gateway: Gateway,
  id: string,
  fields: { command: string; cwd: string; timeoutMs?: number; stdinData?: string; execId?: string },
): Promise<ApiAnswer> {
  return api(gateway, "POST", `/v1/sandboxes/${id}/execs`, {
    execId: fields.execId ?? randomUUID(),
    timeoutMs: 60_000,
    ...fields,
  });
}

/** Polls an exec until it reaches a terminal status, as hermes' client does; its last answer. */
export async function pollExec(gateway: Gateway, id: string, execId: string): Promise<ApiAnswer> {
  let last: ApiAnswer | undefined;
  await eventually(async () => {
    last = await api(gateway, "GET", `/v1/sandboxes/${id}/execs/${execId}`);
    return last.status !== 200 || last.body.status !== "running";
  }, `exec ${execId} to end`);
  return last!;
}

/** Starts an exec and waits for its end: the answer with its status, output and returncode. */
export async function runExec(
  gateway: Gateway,
  id: string,
  fields: Parameters<typeof startExec>[2],
): Promise<ApiAnswer["body"]> {
  const started = await startExec(gateway, id, fields);
  if (started.status === 200) return started.body;
  if (started.status !== 202) throw new Error(`exec failed: ${started.status} ${JSON.stringify(started.body)}`);
  return (await pollExec(gateway, id, started.body.execId as string)).body;
}
