/**
 * `GET /v2/sandboxes` (and the older `GET /sandboxes`) as openapi.yml has
 * it: filtered by metadata, state, startedAfter and template, in pages of
 * `limit` (1..100, 100 when absent) ordered by start time (`order`: v2's
 * default is desc, newest first, as openapi.yml says; the older list's asc),
 * the next page's `nextToken` in the `x-next-token` header while more remain.
 */

import { E2bError } from "./errors.js";
import type { SandboxEntry } from "./entry.js";

const MAX_LIMIT = 100;

export interface SandboxPage {
  entries: SandboxEntry[];
  /** Where the next page starts; undefined on the last one. */
  nextToken: string | undefined;
}

export function sandboxPage(all: readonly SandboxEntry[], params: URLSearchParams, v2: boolean): SandboxPage {
  const wanted = metadataFilter(params.get("metadata"));
  const states = (params.get("state") ?? "running").split(",").filter((s) => s !== "");
  for (const state of states)
    if (state !== "running" && state !== "paused")
      throw new E2bError(400, `state must be running or paused, got ${JSON.stringify(state)}`);
  const after = startedAfter(params.get("startedAfter"));
  const template = params.get("template") ?? "";
  const limit = pageLimit(params);
  const direction = directionOf(params.get("order"), v2 ? "desc" : "asc");
  const ordered = (a: Position, b: Position): number => direction * byStart(a, b);
  const from = params.get("nextToken") ?? "";
  const cursor = from === "" ? undefined : cursorOf(from);
  // Nothing here is ever paused: a v2 list of paused sandboxes only is empty.
  if (v2 && !states.includes("running")) return { entries: [], nextToken: undefined };
  const matching = all
    .filter((entry) => Object.entries(wanted).every(([key, value]) => entry.metadata[key] === value))
    .filter((entry) => after === undefined || entry.startedAt.getTime() >= after)
    .filter((entry) => template === "" || entry.templateId === template)
    .sort(ordered)
    .filter((entry) => cursor === undefined || ordered(entry, cursor) > 0);
  const entries = matching.slice(0, limit);
  const last = entries.at(-1);
  const nextToken = matching.length > limit && last !== undefined ? tokenOf(last) : undefined;
  return { entries, nextToken };
}

interface Position {
  startedAt: Date;
  record: { sandboxId: string };
}

function byStart(a: Position, b: Position): number {
  const time = a.startedAt.getTime() - b.startedAt.getTime();
  return time !== 0
    ? time
    : a.record.sandboxId < b.record.sandboxId
      ? -1
      : a.record.sandboxId > b.record.sandboxId
        ? 1
        : 0;
}

/** The last sandbox a page held (its start and id): the next page begins after it, even if it is gone by then. */
function tokenOf(entry: SandboxEntry): string {
  return pageToken(entry.startedAt.getTime(), entry.record.sandboxId);
}

function cursorOf(token: string): Position {
  const { time, id } = pageCursor(token);
  return { startedAt: new Date(time), record: { sandboxId: id } };
}

/** A next page's token: the time and id of the last item of the page before (snapshots page the same way). */
export function pageToken(time: number, id: string): string {
  return Buffer.from(JSON.stringify([time, id])).toString("base64url");
}

export function pageCursor(token: string): { time: number; id: string } {
  try {
    const [time, id] = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as unknown[];
    if (typeof time === "number" && Number.isFinite(time) && typeof id === "string") return { time, id };
  } catch {
    // answered below
  }
  throw new E2bError(400, `nextToken ${JSON.stringify(token)} is not one this server gave (pass x-next-token as sent)`);
}

/** 1 for oldest first (asc), -1 for newest first (desc). */
function directionOf(value: string | null, fallback: "asc" | "desc"): 1 | -1 {
  const order = value === null || value === "" ? fallback : value;
  if (order !== "asc" && order !== "desc")
    throw new E2bError(400, `order must be asc or desc, got ${JSON.stringify(value)}`);
  return order === "asc" ? 1 : -1;
}

/** `limit`: 1 to 100, 100 when absent. */
export function pageLimit(params: URLSearchParams): number {
  const value = params.get("limit");
  if (value === null || value === "") return MAX_LIMIT;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw new E2bError(400, `limit must be an integer from 1 to ${MAX_LIMIT}, got ${JSON.stringify(value)}`);
  return limit;
}

function startedAfter(value: string | null): number | undefined {
  if (value === null || value === "") return undefined;
  const time = Date.parse(value);
  if (Number.isNaN(time))
    throw new E2bError(400, `startedAfter must be an RFC 3339 date-time, got ${JSON.stringify(value)}`);
  return time;
}

/** The SDK sends `metadata` as one query value: key=value pairs, each part percent-encoded, joined by `&`. */
function metadataFilter(value: string | null): Record<string, string> {
  if (value === null || value === "") return {};
  const pairs: Record<string, string> = {};
  try {
    for (const [key, item] of new URLSearchParams(value)) pairs[decodeURIComponent(key)] = decodeURIComponent(item);
  } catch {
    throw new E2bError(400, `metadata filter ${JSON.stringify(value)} has malformed percent-encoding`);
  }
  return pairs;
}
