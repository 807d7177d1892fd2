/**
 * The create request (openapi.yml's NewSandbox) checked field by field:
 * what this server does is taken, what it cannot honour is refused by name
 * (silently ignoring `allow_internet_access: false` would be a lie).
 */

import { variableName } from "../../core/options.js";
import { E2bError, notImplemented } from "./errors.js";
import type { CommandsMode } from "./entry.js";
import type { NewSandbox } from "./sandbox-table.js";

/** The one template: the backend serve was started with. */
export const BASE_TEMPLATE = "base";
/** The metadata key that picks what commands.run keeps between calls (docs/e2b.md). */
export const COMMANDS_KEY = "shellwright:commands";
/** E2B's own default when a create names no timeout (the SDK always sends one: 300 s). */
const DEFAULT_TIMEOUT_S = 300;
/** E2B's ceiling (Pro): one day. */
const MAX_TIMEOUT_S = 86_400;

/** `isSnapshot`: whether a template id names a snapshot taken on this server (snapshots.ts). */
export function newSandbox(body: Record<string, unknown>, isSnapshot: (templateId: string) => boolean): NewSandbox {
  const given = body.templateID ?? BASE_TEMPLATE;
  if (typeof given !== "string") throw new E2bError(400, `templateID must be a string, got ${JSON.stringify(given)}`);
  const templateId = given === "" ? BASE_TEMPLATE : given;
  if (templateId !== BASE_TEMPLATE && !isSnapshot(templateId))
    throw new E2bError(
      404,
      `Template ${JSON.stringify(templateId)} not found: this Shellwright server has template "base" (the backend it was started with) and the snapshots taken on it`,
    );
  if (body.autoPause === true) throw notImplemented("autoPause (pausing a sandbox on timeout)");
  if (
    body.autoResume !== undefined &&
    body.autoResume !== null &&
    (body.autoResume as { enabled?: unknown }).enabled === true
  )
    throw notImplemented("autoResume");
  if (body.allow_internet_access === false) throw notImplemented("allow_internet_access: false (egress rules)");
  if (body.network !== undefined && body.network !== null) throw notImplemented("network (egress rules)");
  if (body.volumeMounts !== undefined) throw notImplemented("volumeMounts (volumes)");
  if (body.mcp !== undefined && body.mcp !== null) throw notImplemented("mcp (the MCP gateway)");
  const metadata = stringMap(body, "metadata");
  return {
    templateId,
    timeoutS: timeoutSeconds(body.timeout ?? DEFAULT_TIMEOUT_S),
    envVars: variables(stringMap(body, "envVars")),
    metadata,
    commands: commandsMode(metadata[COMMANDS_KEY]),
  };
}

export function timeoutSeconds(value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_TIMEOUT_S)
    throw new E2bError(
      400,
      `timeout must be a whole number of seconds from 0 to ${MAX_TIMEOUT_S}, got ${JSON.stringify(value)}`,
    );
  return value;
}

/**
 * `fresh` (the default): each command starts from the sandbox's starting
 * state, as on E2B, since code written for E2B counts on it. `session`: a
 * `cd` or `export` holds for the commands after it, as in a Shellwright session.
 */
function commandsMode(value: string | undefined): CommandsMode {
  if (value === undefined || value === "fresh") return "fresh";
  if (value === "session") return "session";
  throw new E2bError(400, `metadata["${COMMANDS_KEY}"] must be "fresh" or "session", got ${JSON.stringify(value)}`);
}

/** Names checked here, so a bad one is named as the client sent it (envVars), not as the session's env. */
function variables(vars: Record<string, string>): Record<string, string> {
  for (const name of Object.keys(vars)) {
    try {
      variableName("envVars", name);
    } catch (error) {
      throw new E2bError(400, error instanceof Error ? error.message : String(error));
    }
  }
  return vars;
}

function stringMap(body: Record<string, unknown>, field: string): Record<string, string> {
  const value = body[field];
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw new E2bError(400, `${field} must be an object of strings, got ${JSON.stringify(value)}`);
  for (const [key, item] of Object.entries(value))
    if (typeof item !== "string")
      throw new E2bError(400, `${field}[${JSON.stringify(key)}] must be a string, got ${JSON.stringify(item)}`);
  return { ...(value as Record<string, string>) };
}
