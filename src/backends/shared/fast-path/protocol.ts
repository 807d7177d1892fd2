/**
 * The one definition of the protocol between Node and the fast-path helper
 * (native/swmux.c). The C side does not restate it: scripts/build-native.mjs
 * writes native/build/protocol.h from `protocolHeader()` before it compiles,
 * so the two sides cannot drift.
 *
 * Every frame, both ways: a 21-byte header, then the payload.
 *   type:u8  id:u32be  len:u32be  seq:u32be  tag:8 bytes
 * `seq` counts the frames of one direction from 0, so a lost, repeated or
 * reordered frame is seen. `tag` is the first 8 bytes of
 * HMAC-SHA256(key, direction, the 13 header bytes before it, payload), with
 * a 32-byte key Node makes per helper and sends first (raw; a base64 line in
 * text mode). An output frame's payload ('O', and 'e' for stderr apart) is
 * not tagged: it is the command's own bytes, and any byte injected into the stream shifts the next header,
 * whose tag then fails. A process that can write into the channel (root
 * with CAP_SYS_PTRACE, docs/guarantees.md) cannot forge a frame without the
 * key, which it could read only by tracing the helper.
 */

export const PROTOCOL_VERSION = 6;
export const HEADER_BYTES = 21;
/** Where the tag starts in the header (the bytes before it are tagged). */
export const TAGGED_HEADER_BYTES = 13;
export const TAG_BYTES = 8;
export const KEY_BYTES = 32;

/** The direction byte each tag starts with: a frame cannot be replayed back the other way. */
export const TO_HELPER = 0x4e; // 'N'
export const FROM_HELPER = 0x48; // 'H'

/** Node -> helper. */
export const REQUEST = {
  /** Run a call: u8 flags (RUN_FLAG), u32be stdin length, stdin, the job script. */
  run: "R",
  /** Signal a call's job group: u8 signal number. */
  kill: "K",
  quit: "Q",
  /** Are you there: answered by a `pong` frame with the same id. */
  ping: "P",
  /**
   * Attach to a background process one of the helper's jobs started (it is the helper's child now): u32be its pid,
   * u8 ATTACH_FLAG bits, then its directory (processes' `log`, `err`, `bound`, `in`, `holder`). Its output comes as
   * `procOutput` frames from the log's start (with `stderrApart`, its stderr as `procStderr` frames from `err`'s
   * start), its end as one `procEnd`; the id is the channel's, never a call's.
   */
  attach: "T",
  /** Bytes for an attached process's stdin (its terminal): answered by one `inputAck`. One at a time per channel. */
  input: "I",
  /** Detach: answered by the channel's `procEnd` (detached) unless it had ended already. */
  detach: "U",
} as const;

/** A run request's flag bits. */
export const RUN_FLAG = {
  /** Its stdin is in the frame. */
  stdin: 1,
  /** Its stderr comes apart, as 'e' frames. */
  stderrApart: 2,
} as const;

/** An attach request's flag bits. */
export const ATTACH_FLAG = {
  /** The process keeps its stderr apart (`err`): stream it too, as `procStderr` frames. */
  stderrApart: 1,
} as const;
/** Every ATTACH_FLAG bit: an attach with another is a protocol violation. */
export const ATTACH_FLAGS_KNOWN = Object.values(ATTACH_FLAG).reduce((all, bit) => all | bit, 0);

/** An exit frame's `started` field: whether the call's job ran (a call not started runs again on the plain path). */
export const STARTED = { no: 0, yes: 1, maybe: 2 } as const;

/**
 * An exit frame's payload: one byte per field at these offsets, then its text
 * to the end of the frame, raw bytes: after a committed call the session's
 * cwd (empty: unchanged), else why its state could not be saved (empty: it
 * did not fail). frames.ts decodes it, swmux.c's `answer` encodes it.
 */
export const EXIT_FIELD = {
  /** The command's exit status, 0 to 255 (128 + signal when it was killed). */
  status: 0,
  /** EXIT_FLAG bits. */
  flags: 1,
  /** A STARTED value. */
  started: 2,
} as const;
/** Where an exit frame's text starts. */
export const EXIT_TEXT_AT = 3;

/** An exit frame's flag bits. */
export const EXIT_FLAG = {
  /** The job dumped its state completely and was not killed: the snapshot is its state now. */
  committed: 1,
  /** A kill reached the job before it finished. */
  killed: 2,
  /** A process is still in the job's process group. */
  groupLeft: 4,
} as const;

/** The status of a call the helper did not start (with STARTED no or maybe). */
export const NOT_STARTED_STATUS = 125;

/** Helper -> Node. */
export const REPLY = {
  /** The launcher is ready. */
  ready: "H",
  /** The launcher is restarting after a state change (requests wait for it). */
  restarting: "B",
  /** A call's job started: u32be pid. */
  started: "S",
  /** A call's output bytes (its stdout alone when it asked for stderr apart). */
  output: "O",
  /** The stderr bytes of a call that asked for them apart; untagged payload, as output's. */
  stderr: "e",
  /** A call ended: EXIT_FIELD, then its text. */
  exit: "X",
  pong: "P",
  /** Still reading a request that is arriving (sent at most every 250 ms): the helper is not stuck. */
  alive: "A",
  /** An attached process's output bytes, in order (its stdout alone when its stderr is apart); untagged payload. */
  procOutput: "o",
  /** An attached process's stderr bytes, in order, when attached with `stderrApart`; untagged payload. */
  procStderr: "E",
  /** An input request was handled: u8 an INPUT_STATUS. */
  inputAck: "i",
  /** An attach ended, the last frame of its channel: u8 a PROC_END. */
  procEnd: "x",
} as const;

/** An `inputAck`'s status. */
export const INPUT_STATUS = {
  /** All of the bytes are in the process's stdin. */
  written: 0,
  /** Its stdin is closed (or it ended): nothing was written. */
  closed: 1,
  /** Its stdin is not open yet (the process is starting): nothing was written, the plain route waits for it. */
  notReady: 2,
} as const;

/** Why a channel ended (`procEnd`). */
export const PROC_END = {
  /** The process ended; every byte its log held then was sent. */
  ended: 0,
  /** Node detached. */
  detached: 1,
  /** Not attached: not the helper's child, its files cannot be opened, or the table is full. */
  refused: 2,
} as const;

export type RequestType = (typeof REQUEST)[keyof typeof REQUEST];
export type ReplyType = (typeof REPLY)[keyof typeof REPLY];

/** The largest run request: the job script and its stdin (bigger stdin goes by the plain path). */
export const MAX_RUN_BYTES = 64 * 1024 * 1024;
/** The largest output frame the helper writes. */
export const MAX_OUTPUT_FRAME = 256 * 1024;
/** The longest cwd an exit frame carries (a longer one is left out: Node keeps the cwd it knew). */
export const MAX_CWD_BYTES = 65536;
/** Calls one helper runs at once; more wait in Node. */
export const MAX_CALLS = 512;
/** Processes one helper streams at once; an attach beyond them is refused (the process is followed the plain way). */
export const MAX_PROCS = 64;
/** The most stdin one input request carries (Node splits longer writes). */
export const MAX_INPUT_BYTES = 65536;
/** The longest process directory an attach names. */
export const MAX_PROC_DIR_BYTES = 4000;

/** The payload lengths each frame type may have: [min, max]. */
export const REQUEST_LIMITS: Record<RequestType, readonly [number, number]> = {
  R: [5, MAX_RUN_BYTES + 5],
  K: [1, 1],
  Q: [0, 0],
  P: [0, 0],
  T: [6, 5 + MAX_PROC_DIR_BYTES],
  I: [1, MAX_INPUT_BYTES],
  U: [0, 0],
};
export const REPLY_LIMITS: Record<ReplyType, readonly [number, number]> = {
  H: [0, 0],
  B: [0, 0],
  S: [4, 4],
  O: [1, MAX_OUTPUT_FRAME],
  e: [1, MAX_OUTPUT_FRAME],
  X: [EXIT_TEXT_AT, EXIT_TEXT_AT + MAX_CWD_BYTES],
  P: [0, 0],
  A: [0, 0],
  o: [1, MAX_OUTPUT_FRAME],
  E: [1, MAX_OUTPUT_FRAME],
  i: [1, 1],
  x: [1, 1],
};

/** How the helper exits, and why. */
export const HELPER_EXIT = {
  ok: 0,
  usage: 2,
  /** Its launcher died three times before it was ready. */
  launcherFailed: 3,
  /** A system call it cannot do without failed (stderr says which). */
  internal: 4,
  /** No pidfds (Linux < 5.3): the fast path cannot run on this kernel. */
  noPidfd: 5,
  /** A frame broke the protocol (stderr says how): something wrote into the channel. */
  protocol: 6,
} as const;

/** native/build/protocol.h, as scripts/build-native.mjs writes it. */
export function protocolHeader(): string {
  const lines = [
    "/* Generated from src/backends/shared/fast-path/protocol.ts by scripts/build-native.mjs: do not edit. */",
    "#ifndef SWMUX_PROTOCOL_H",
    "#define SWMUX_PROTOCOL_H",
    `#define PROTOCOL_VERSION ${PROTOCOL_VERSION}`,
    `#define HEADER_BYTES ${HEADER_BYTES}`,
    `#define TAGGED_HEADER_BYTES ${TAGGED_HEADER_BYTES}`,
    `#define TAG_BYTES ${TAG_BYTES}`,
    `#define KEY_BYTES ${KEY_BYTES}`,
    `#define TO_HELPER ${TO_HELPER}`,
    `#define FROM_HELPER ${FROM_HELPER}`,
    `#define MAX_RUN_BYTES ${MAX_RUN_BYTES}u`,
    `#define MAX_OUTPUT_FRAME ${MAX_OUTPUT_FRAME}`,
    `#define MAX_CWD_BYTES ${MAX_CWD_BYTES}`,
    `#define MAX_CALLS ${MAX_CALLS}`,
    `#define MAX_PROCS ${MAX_PROCS}`,
    `#define MAX_INPUT_BYTES ${MAX_INPUT_BYTES}`,
    `#define MAX_PROC_DIR_BYTES ${MAX_PROC_DIR_BYTES}`,
    ...Object.entries(REQUEST).map(([name, type]) => `#define REQ_${name.toUpperCase()} '${type}'`),
    ...Object.entries(REPLY).map(([name, type]) => `#define REP_${snake(name)} '${type}'`),
    ...Object.entries(HELPER_EXIT).map(([name, code]) => `#define EXIT_${snake(name)} ${code}`),
    ...Object.entries(ATTACH_FLAG).map(([name, bit]) => `#define ATTACH_FLAG_${snake(name)} ${bit}`),
    `#define ATTACH_FLAGS_KNOWN ${ATTACH_FLAGS_KNOWN}`,
    ...Object.entries(RUN_FLAG).map(([name, bit]) => `#define RUN_FLAG_${snake(name)} ${bit}`),
    ...Object.entries(STARTED).map(([name, value]) => `#define STARTED_${snake(name)} ${value}`),
    ...Object.entries(EXIT_FIELD).map(([name, at]) => `#define EXIT_FIELD_${snake(name)} ${at}`),
    `#define EXIT_TEXT_AT ${EXIT_TEXT_AT}`,
    ...Object.entries(EXIT_FLAG).map(([name, bit]) => `#define EXIT_FLAG_${snake(name)} ${bit}`),
    `#define NOT_STARTED_STATUS ${NOT_STARTED_STATUS}`,
    ...Object.entries(INPUT_STATUS).map(([name, value]) => `#define INPUT_${snake(name)} ${value}`),
    ...Object.entries(PROC_END).map(([name, value]) => `#define PROC_END_${snake(name)} ${value}`),
    "/* Request payload bounds: the switch the reader validates with. */",
    "static inline int request_bounds(unsigned char type, unsigned long *min, unsigned long *max) {",
    "  switch (type) {",
    ...Object.entries(REQUEST_LIMITS).map(
      ([type, [min, max]]) => `  case '${type}': *min = ${min}ul; *max = ${max}ul; return 1;`,
    ),
    "  default: return 0;",
    "  }",
    "}",
    "#endif",
    "",
  ];
  return lines.join("\n");
}

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
}
