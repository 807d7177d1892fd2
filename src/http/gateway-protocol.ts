/**
 * The gateway's wire format, shared by `shellwright serve` (src/gateway/) and
 * the `gateway` backend (src/backends/gateway/), so neither side owns it.
 * docs/gateway.md describes it for people; this file is the truth.
 */

import { GATEWAY_TOKEN_ENV_VAR } from "../core/credentials.js";
import type { ExecuteResult } from "../core/environment.js";

export const API_PREFIX = "/v1";
export const DEFAULT_GATEWAY_PORT = 7420;
/** Where both ends look for the token when none is given explicitly. */
export const TOKEN_ENV_VAR = GATEWAY_TOKEN_ENV_VAR;
export const NDJSON = "application/x-ndjson";

export type GatewayErrorCode =
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "BAD_REQUEST"
  | "INVALID_OPTION"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "PAYLOAD_TOO_LARGE"
  | "SESSION_NOT_FOUND"
  | "EXECUTION_NOT_FOUND"
  | "DUPLICATE_EXECUTION"
  | "TOO_MANY_SESSIONS"
  | "TOO_MANY_EXECUTIONS"
  | "TOO_MANY_LONG_LIVED_EXECUTIONS"
  | "BACKEND_ERROR"
  | "SHUTTING_DOWN"
  | "CHECKPOINT_FAILED"
  | "UNSUPPORTED"
  | "INTERNAL";

export interface ErrorBody {
  error: {
    code: GatewayErrorCode;
    message: string;
    /** The request field at fault (INVALID_OPTION, BAD_REQUEST). */
    option?: string;
    /** When a retry may succeed (429). */
    retryAfterMs?: number;
    /** CHECKPOINT_FAILED: the CheckpointError's reason (busy, too_large, not_found, aborted, failed). */
    reason?: string;
  };
}

/** POST /v1/sessions. Every field is optional; the server's config decides the backend. */
export interface CreateSessionRequest {
  // The session options a client may choose, as in CommonConfig; the server's config fills the rest.
  timeoutMs?: number;
  maxOutputBytes?: number;
  /** @deprecated maxOutputBytes's old spelling, still accepted. */
  maxOutputChars?: number;
  outputHeadFraction?: number;
  killGraceMs?: number;
  initTimeoutMs?: number;
  /** Absolute path inside the backend, under one of the server's allowed roots. */
  cwd?: string;
  /** Variables added to the session's starting environment. */
  env?: Record<string, string>;
}

export interface SessionInfo {
  id: string;
  backend: string;
  cwd: string;
  snapshotReady: boolean;
  paths: { snapshot: string; cwdFile: string };
  /** ISO 8601. */
  createdAt: string;
  lastActiveAt: string;
  /** Executions in flight (long-lived ones not counted). */
  runningExecutions: number;
  /** Long-lived executions (background processes' followers and watchers). Absent from older gateways. */
  longLivedExecutions?: number;
  /** The workspace root its checkpoints copy, when the session declared one (docs/branching.md). */
  workspaceRoot?: string;
}

/**
 * A checkpoint of a gateway session (`POST /sessions/{id}/checkpoints`),
 * named by the server's id; rolled back with `POST …/checkpoints/{cp}/rollback`,
 * released with `DELETE …/checkpoints/{cp}`.
 */
export interface CheckpointInfo {
  id: string;
  /** ISO 8601. */
  createdAt: string;
  /** `filesystem`: the server's backend saved its sandbox's whole filesystem (a Modal image, a Daytona snapshot). */
  holds: { shell: true; workspace?: { root: string; bytes: number }; filesystem?: { snapshot: string } };
}

/** `POST /sessions/{id}/fork` with `{count}` (1 to 100): the children, each a session of its own on the gateway. */
export interface ForkResponse {
  sessions: SessionInfo[];
}

export interface CreateSessionResponse extends SessionInfo {
  /** Warnings the session emitted while it opened (a failed init). */
  warnings: string[];
}

/** POST /v1/sessions/{id}/executions */
export interface ExecuteRequest {
  command: string;
  /** Chosen by the client so it can cancel before the response starts; 1–64 of [A-Za-z0-9_-]. */
  executionId?: string;
  /** Absolute path, under an allowed root; runs this one command there. */
  cwd?: string;
  timeoutMs?: number;
  /** UTF-8 text for stdin. */
  stdin?: string;
  /** Bytes for stdin, base64; use instead of `stdin` for binary data. */
  stdinBase64?: string;
  /** Answer with NDJSON events as output arrives instead of one JSON result. */
  stream?: boolean;
  /** Run from the session's state but leave its env and cwd untouched (execute()'s `isolated`). */
  isolated?: boolean;
  /** Keep stdout and stderr apart (execute()'s `separateStreams`): the result and each output event say which. */
  separateStreams?: boolean;
  /** Lasts as long as a background process (execute()'s `longLived`): counted apart from the executions in flight. */
  longLived?: boolean;
}

export type ExecutionResult = ExecuteResult & { executionId: string };

/** One line of a streaming execution (NDJSON). */
export type StreamEvent =
  | { type: "started"; executionId: string }
  /** `stream` only for an execution with separateStreams. */
  | { type: "output"; text: string; stream?: "stdout" | "stderr" }
  | { type: "result"; result: ExecutionResult }
  | ({ type: "error" } & ErrorBody);

export const EXECUTION_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const SESSION_ID = /^[0-9a-f]{12}$/;
