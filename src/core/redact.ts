/**
 * Masking secrets in text: the one redaction rule of Shellwright, used by the
 * tools (what a model sees) and the CLI (what it prints in an error).
 *
 * Two kinds of secret are masked, each occurrence replaced by `[REDACTED]`:
 * known values (a session's secret-looking env values and its `secrets`), and
 * well-known key shapes (OpenAI/Anthropic `sk-…`, GitHub `ghp_…`, AWS `AKIA…`,
 * Slack `xoxb-…`, private key blocks, the token after `Bearer`).
 *
 * Output is often cut (head, notice, tail) or arrives in pieces, and a secret
 * can straddle a cut. So the text between cut notices is redacted piece by
 * piece with its cut sides "open": a fragment at an open side that is the
 * start (or the end) of a known value is masked too, and a key shape running
 * into a cut masks the start of the next piece. `StreamRedactor` applies the
 * same rule to text that arrives in chunks, holding back a possible secret's
 * beginning until the next chunk shows whether it is one.
 *
 * Not a security boundary: a secret transformed (base64, split, reversed) or
 * shorter than MIN_SECRET_CHARS passes through.
 */

/** What a masked secret becomes. */
export const REDACTED = "[REDACTED]";
/** Known values shorter than this are not masked: they would hide ordinary words and numbers. */
export const MIN_SECRET_CHARS = 6;
/** A fragment of a known value at a cut is masked from this many characters on. */
export const MIN_FRAGMENT_CHARS = 4;

/** Variable names whose values are secrets: `*TOKEN*`, `*SECRET*`, `*KEY*`, `*PASSWORD*`, `*CREDENTIAL*`. */
export function isSecretName(name: string): boolean {
  return /TOKEN|SECRET|KEY|PASSWORD|CREDENTIAL/i.test(name);
}

/** The values of `env` whose names look secret. */
export function secretEnvValues(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(env)
    .filter(([name, value]) => isSecretName(name) && typeof value === "string")
    .map(([, value]) => value!);
}

// Key shapes, each with the literals one of which it must contain: a cheap
// look for them first spares a regex pass over a large text that has none.
const TOKEN_SHAPES: readonly { needles: readonly string[]; shape: RegExp }[] = [
  { needles: ["sk-"], shape: /\bsk-[A-Za-z0-9_-]{20,}/g }, // OpenAI, Anthropic (sk-ant-…, sk-proj-…)
  { needles: ["gh"], shape: /\bgh[pousr]_[A-Za-z0-9]{20,}/g }, // GitHub classic tokens
  { needles: ["github_pat_"], shape: /\bgithub_pat_[A-Za-z0-9_]{20,}/g }, // GitHub fine-grained tokens
  { needles: ["AKIA", "ASIA"], shape: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g }, // AWS access key ids
  { needles: ["xox"], shape: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g }, // Slack
];
/** The token after `Bearer` (the word itself stays). */
const BEARER = /\bBearer[ \t]+([A-Za-z0-9._~+/=-]{8,})/gi;
const KEY_BEGIN = /-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----/g;
const KEY_END = /-----END[A-Z0-9 ]*PRIVATE KEY-----/g;
/** A key shape's start reaching the end of the text, whatever its length so far. */
const OPEN_TOKEN_END =
  /(?:\b(?:sk-|gh[pousr]_|github_pat_|AKIA|ASIA|xox[abposr]-)[A-Za-z0-9_-]*|\bBearer[ \t]+[A-Za-z0-9._~+/=-]*)$/i;
const TOKEN_CHARS = /^[A-Za-z0-9._~+/=-]+/;
/** The one wording of a cut (see truncationNotice in output.ts). */
const CUT_NOTICE = /\n\n\.\.\. \[OUTPUT TRUNCATED - \d+ bytes omitted out of \d+ total[^\n]*?\] \.\.\.\n\n/g;

/** What runs on from one piece into the next across a cut: nothing, a key shape's token, a private key block. */
export type Carry = "none" | "token" | "key";

export interface Edges {
  /** The text starts at a cut (a secret may end here). @default false */
  openStart?: boolean;
  /** The text ends at a cut (a secret may start here). @default false */
  openEnd?: boolean;
  /** Keep the line breaks of a masked stretch (a key block): each of its lines becomes one mask. @default false */
  keepLines?: boolean;
}

type Range = [start: number, end: number];

export class Redactor {
  /** Longest first; each with its JSON-escaped form when that differs. */
  readonly #values: readonly string[];

  /** `minValueChars`: the CLI scrubs its own short config values from error messages too. */
  constructor(values: Iterable<string>, options: { minValueChars?: number } = {}) {
    const min = options.minValueChars ?? MIN_SECRET_CHARS;
    const forms = new Set<string>();
    for (const value of values) {
      if (typeof value !== "string" || value.length < min) continue;
      forms.add(value);
      forms.add(JSON.stringify(value).slice(1, -1));
    }
    this.#values = [...forms].sort((a, b) => b.length - a.length);
  }

  /** True when it masks known values (key shapes are masked either way). */
  get hasValues(): boolean {
    return this.#values.length > 0;
  }

  /**
   * The text with every secret masked. Cut notices inside it split it into
   * pieces whose cut sides are open; `edges` says whether its own ends are cuts.
   */
  redact(text: string, edges: Edges = {}): string {
    if (!text.includes("[OUTPUT TRUNCATED")) return this.redactPiece(text, edges).text;
    const keepLines = edges.keepLines === true;
    let out = "";
    let from = 0;
    let carry: Carry = "none";
    let openStart = edges.openStart === true;
    for (const match of text.matchAll(CUT_NOTICE)) {
      const piece = this.redactPiece(text.slice(from, match.index), { openStart, openEnd: true, carry, keepLines });
      out += piece.text + match[0];
      carry = piece.carry;
      openStart = true;
      from = match.index + match[0].length;
    }
    return (
      out + this.redactPiece(text.slice(from), { openStart, openEnd: edges.openEnd === true, carry, keepLines }).text
    );
  }

  /**
   * Where `text` (one piece, no cut notices) holds secrets: the [start, end)
   * stretches redact() would mask, sorted, overlapping ones merged. For text
   * laid out otherwise than it is matched (a terminal's rows of one wrapped line).
   */
  maskedRanges(text: string): [start: number, end: number][] {
    const ranges = this.#ranges(text, {}).ranges.sort((a, b) => a[0] - b[0]);
    const merged: Range[] = [];
    for (const [start, end] of ranges) {
      const last = merged.at(-1);
      if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
      else merged.push([start, end]);
    }
    return merged;
  }

  /** One piece without cuts inside; `carry` is what ran into its start from the piece before. */
  redactPiece(text: string, options: Edges & { carry?: Carry } = {}): { text: string; carry: Carry } {
    const { ranges, carry } = this.#ranges(text, options);
    return { text: applyRanges(text, ranges, options.keepLines === true), carry };
  }

  #ranges(text: string, options: Edges & { carry?: Carry }): { ranges: Range[]; carry: Carry } {
    const ranges: Range[] = [];
    let from = 0;
    const carry = options.carry ?? "none";
    if (carry === "key") {
      KEY_END.lastIndex = 0;
      const end = KEY_END.exec(text);
      from = end === null ? text.length : end.index + end[0].length;
      ranges.push([0, from]);
      if (end === null) return { ranges, carry: "key" };
    } else if (carry === "token") {
      const run = TOKEN_CHARS.exec(text);
      if (run !== null) ranges.push([0, run[0].length]);
    }
    if (options.openStart === true && carry === "none") this.#openStart(text, ranges);
    this.#values.forEach((value) => collect(text, value, ranges));
    for (const { needles, shape } of TOKEN_SHAPES) {
      if (!needles.some((needle) => text.includes(needle))) continue;
      for (const match of text.matchAll(shape)) ranges.push([match.index, match.index + match[0].length]);
    }
    if (/earer|EARER/.test(text)) {
      for (const match of text.matchAll(BEARER)) {
        const end = match.index + match[0].length;
        ranges.push([end - match[1]!.length, end]);
      }
    }
    let next: Carry = "none";
    if (text.includes("PRIVATE KEY-----")) next = keyBlocks(text, from, ranges);
    if (options.openEnd === true && next === "none") next = this.#openEnd(text, ranges);
    return { ranges, carry: next };
  }

  /**
   * Where a secret may begin that the next chunk would complete: the start of
   * a trailing word that begins (or may become) a key shape, of a trailing
   * `Bearer …`, of an unfinished private key block, or of the longest ending
   * that begins a known value (values may hold spaces). text.length when
   * there is none, so ordinary output is never held back.
   */
  holdFrom(text: string, carry: Carry = "none"): number {
    let hold = shapeStart(text);
    const window = Math.max(0, text.length - 4096);
    const bearer = /\bBearer(?:[ \t]+\S*)?$/i.exec(text.slice(window));
    if (bearer !== null) hold = Math.min(hold, window + bearer.index);
    const lastBegin = text.lastIndexOf("-----BEGIN");
    if (lastBegin !== -1) {
      const tail = text.slice(lastBegin);
      if (
        !/-----END[A-Z0-9 ]*PRIVATE KEY-----/.test(tail) &&
        (tail.includes("PRIVATE KEY") || (tail.length < 64 && !tail.includes("\n")))
      )
        hold = Math.min(hold, lastBegin);
    }
    for (const value of this.#values) {
      for (let k = Math.min(value.length - 1, text.length); k >= 1; k--) {
        if (text.endsWith(value.slice(0, k))) {
          hold = Math.min(hold, text.length - k);
          break;
        }
      }
    }
    // A whole secret the hold would cut (a value with spaces, a key block) is held whole.
    for (const [start, end] of this.#ranges(text, { carry }).ranges) if (start < hold && end > hold) hold = start;
    return hold;
  }

  /** A leading fragment that ends a known value. */
  #openStart(text: string, ranges: Range[]): void {
    for (const value of this.#values) {
      for (let k = Math.min(value.length - 1, text.length); k >= MIN_FRAGMENT_CHARS; k--) {
        if (text.startsWith(value.slice(value.length - k))) {
          ranges.push([0, k]);
          break;
        }
      }
    }
  }

  /** A trailing fragment that begins a known value or a key shape; a key shape runs on into the next piece. */
  #openEnd(text: string, ranges: Range[]): Carry {
    for (const value of this.#values) {
      for (let k = Math.min(value.length - 1, text.length); k >= MIN_FRAGMENT_CHARS; k--) {
        if (text.endsWith(value.slice(0, k))) {
          ranges.push([text.length - k, text.length]);
          break;
        }
      }
    }
    const open = OPEN_TOKEN_END.exec(text.slice(Math.max(0, text.length - 4096)));
    if (open === null) return "none";
    const start = text.length - open[0].length;
    const bearer = /^Bearer[ \t]+/i.exec(open[0]);
    ranges.push([start + (bearer === null ? 0 : bearer[0].length), text.length]);
    return "token";
  }
}

/** How key shapes begin (a trailing word that starts one of these, or may still become one, is held back). */
const SHAPE_STARTS = ["sk-", "github_pat_", "AKIA", "ASIA", "-----BEGIN"]
  .concat([..."pousr"].map((c) => `gh${c}_`))
  .concat([..."abposr"].map((c) => `xox${c}-`));
const isWordChar = (char: string | undefined): boolean => char !== undefined && /[A-Za-z0-9_]/.test(char);

/** The start of a trailing word that begins a key shape or may still become one; text.length when none. */
function shapeStart(text: string): number {
  const run = /[A-Za-z0-9_-]*$/.exec(text)!;
  for (let at = Math.max(run.index, text.length - 4096); at < text.length; at++) {
    if (text[at] !== "-" && (!isWordChar(text[at]) || isWordChar(text[at - 1]))) continue;
    const word = text.slice(at);
    if (SHAPE_STARTS.some((start) => start.startsWith(word) || word.startsWith(start))) return at;
    if ("bearer".startsWith(word.toLowerCase())) return at;
  }
  return text.length;
}

/** Masks private key blocks from `from` on: BEGIN to END, or to the end of the piece ("key" runs on). */
function keyBlocks(text: string, from: number, ranges: Range[]): Carry {
  // An END before any BEGIN: the block began before a cut.
  KEY_BEGIN.lastIndex = from;
  KEY_END.lastIndex = from;
  const firstBegin = KEY_BEGIN.exec(text);
  const firstEnd = KEY_END.exec(text);
  if (firstEnd !== null && (firstBegin === null || firstEnd.index < firstBegin.index) && from === 0) {
    ranges.push([0, firstEnd.index + firstEnd[0].length]);
  }
  KEY_BEGIN.lastIndex = from;
  for (;;) {
    const begin = KEY_BEGIN.exec(text);
    if (begin === null) return "none";
    KEY_END.lastIndex = begin.index + begin[0].length;
    const end = KEY_END.exec(text);
    if (end === null) {
      ranges.push([begin.index, text.length]);
      return "key";
    }
    ranges.push([begin.index, end.index + end[0].length]);
    KEY_BEGIN.lastIndex = end.index + end[0].length;
  }
}

function collect(text: string, value: string, ranges: Range[]): void {
  for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + value.length)) {
    ranges.push([at, at + value.length]);
  }
}

const isHigh = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/** Replaces each run of overlapping ranges by one REDACTED, never splitting a surrogate pair. */
function applyRanges(text: string, ranges: Range[], keepLines = false): string {
  if (ranges.length === 0) return text;
  ranges.sort((a, b) => a[0] - b[0]);
  let out = "";
  let at = 0;
  let index = 0;
  while (index < ranges.length) {
    let [start, end] = ranges[index++]!;
    while (index < ranges.length && ranges[index]![0] <= end) end = Math.max(end, ranges[index++]![1]);
    if (start < at) start = at;
    if (start > 0 && isLow(text.charCodeAt(start)) && isHigh(text.charCodeAt(start - 1))) start--;
    if (end < text.length && isLow(text.charCodeAt(end)) && isHigh(text.charCodeAt(end - 1))) end++;
    const masked = keepLines ? text.slice(start, end).replace(/[^\n]+/g, REDACTED) : REDACTED;
    out += text.slice(at, start) + masked;
    at = end;
  }
  return out + text.slice(at);
}

/** Largest text a stream holds back while waiting to see whether it is a secret. */
const MAX_HOLD_CHARS = 65_536;

/**
 * Redacts text that arrives in chunks (a command's output as it streams):
 * what might be the start of a secret is held back until the next chunk, so
 * a secret split between chunks is masked whole. end() releases the rest.
 */
export class StreamRedactor {
  readonly #redactor: Redactor;
  #pending = "";
  #carry: Carry = "none";

  constructor(redactor: Redactor) {
    this.#redactor = redactor;
  }

  /** The part of what arrived so far that is safe to show now, masked. */
  push(chunk: string): string {
    this.#pending += chunk;
    let hold = this.#redactor.holdFrom(this.#pending, this.#carry);
    const forced = this.#pending.length - hold > MAX_HOLD_CHARS;
    if (forced) hold = this.#pending.length;
    const piece = this.#redactor.redactPiece(this.#pending.slice(0, hold), {
      openStart: this.#carry !== "none",
      openEnd: forced,
      carry: this.#carry,
    });
    // A key block forced out runs on; a key shape only at a forced cut (otherwise its start is held back).
    this.#carry = forced || piece.carry === "key" ? piece.carry : "none";
    this.#pending = this.#pending.slice(hold);
    return piece.text;
  }

  /** The rest, masked; the stream is over. */
  end(): string {
    const piece = this.#redactor.redactPiece(this.#pending, {
      openStart: this.#carry !== "none",
      carry: this.#carry,
    });
    this.#pending = "";
    this.#carry = "none";
    return piece.text;
  }
}
