/**
 * Finding `old_string` in a file when the model's copy is not quite exact.
 *
 * Strategies are tried in order, from strict to loose; the first that finds
 * anything decides, so a loose strategy never overrides an exact hit. Every
 * strategy returns spans of the *original* text, so the replacement never
 * disturbs what lies around the match. More than one match is refused unless
 * the caller asked to replace all of them.
 */

export type StrategyName =
  | "exact"
  | "line_trimmed"
  | "whitespace_normalized"
  | "indentation_flexible"
  | "escape_normalized"
  | "trimmed_boundary"
  | "unicode_normalized"
  | "block_anchor"
  | "context_aware";

export interface Span {
  start: number;
  end: number;
}

interface Found {
  spans: Span[];
  /** escape_normalized: new_string's literal escapes are meant as characters too. */
  unescapeReplacement?: boolean;
  /** indentation_flexible: new_string re-indented to where each match sits. */
  replacementFor?: (span: Span, newString: string) => string;
}

type Strategy = (text: string, pattern: string, lines: LineIndex) => Found | undefined;

/** Start offsets of every line, for strategies that compare whole lines. */
class LineIndex {
  readonly lines: string[];
  readonly starts: number[];
  constructor(text: string) {
    this.lines = text.split("\n");
    this.starts = [];
    let offset = 0;
    for (const line of this.lines) {
      this.starts.push(offset);
      offset += line.length + 1;
    }
  }
  /** The span of lines [first, first+count), without the newline after the last one. */
  span(first: number, count: number): Span {
    const last = first + count - 1;
    return { start: this.starts[first]!, end: this.starts[last]! + this.lines[last]!.length };
  }
}

/** The pattern as lines; a trailing newline becomes part of the match instead of an empty last line. */
function patternLines(pattern: string): { lines: string[]; trailingNewline: boolean } {
  const trailingNewline = pattern.endsWith("\n");
  const lines = (trailingNewline ? pattern.slice(0, -1) : pattern).split("\n");
  return { lines, trailingNewline };
}

/** Windows of the text's lines that equal the pattern's lines under `same`. */
function lineWindows(
  index: LineIndex,
  pattern: string,
  same: (fileLine: string, patternLine: string, position: number, count: number) => boolean,
): Span[] {
  const { lines: wanted, trailingNewline } = patternLines(pattern);
  const spans: Span[] = [];
  const total = index.lines.length - (trailingNewline ? 1 : 0);
  for (let first = 0; first + wanted.length <= total; first++) {
    let ok = true;
    for (let k = 0; k < wanted.length && ok; k++) ok = same(index.lines[first + k]!, wanted[k]!, k, wanted.length);
    if (!ok) continue;
    const span = index.span(first, wanted.length);
    if (trailingNewline) span.end += 1;
    spans.push(span);
    first += wanted.length - 1; // matches do not overlap
  }
  return spans;
}

/** Lines of the text, not counting the empty one after a final newline. */
const realLineCount = (index: LineIndex): number =>
  index.lines.length - (index.lines[index.lines.length - 1] === "" ? 1 : 0);

function allIndexes(text: string, pattern: string): Span[] {
  const spans: Span[] = [];
  if (pattern === "") return spans;
  for (let at = text.indexOf(pattern); at !== -1; at = text.indexOf(pattern, at + pattern.length)) {
    spans.push({ start: at, end: at + pattern.length });
  }
  return spans;
}

const unescapeLiterals = (text: string): string =>
  text.replace(/\\n/g, "\n").replace(/\\t/g, "\t").replace(/\\r/g, "\r");

/** The leading whitespace of the first non-blank line. */
const indentOf = (text: string): string =>
  /^[ \t]*/.exec(text.split("\n").find((line) => line.trim() !== "") ?? "")![0];

/**
 * new_string written at the pattern's indentation, moved to the file's. Left
 * alone when the model already used the file's indentation.
 */
function reindent(newString: string, from: string, to: string): string {
  if (from === to || indentOf(newString) === to) return newString;
  return newString
    .split("\n")
    .map((line) => {
      if (line.trim() === "") return line;
      if (from === "") return to + line;
      return line.startsWith(from) ? to + line.slice(from.length) : line;
    })
    .join("\n");
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const UNICODE_LOOKALIKES: ReadonlyArray<[RegExp, string]> = [
  [/[\u2018\u2019\u201A\u201B\u2032]/g, "'"],
  [/[\u201C\u201D\u201E\u201F\u2033]/g, '"'],
  [/[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]/g, "-"],
  [/\u2026/g, "..."],
  [/[\u00A0\u2007\u202F\u2009\u200A\u2002\u2003]/g, " "],
  [/[\u200B\uFEFF]/g, ""],
];

/** Smart quotes, dashes, ellipses and odd spaces as their ASCII forms. */
export function normalizeUnicode(text: string): string {
  let out = text.normalize("NFC");
  for (const [from, to] of UNICODE_LOOKALIKES) out = out.replace(from, to);
  return out;
}

/** The normalized text plus, for each of its characters, the offset in the original. */
function normalizeWithMap(text: string): { normalized: string; map: number[] } {
  let normalized = "";
  const map: number[] = [];
  for (let i = 0; i < text.length;) {
    const code = text.codePointAt(i)!;
    const char = String.fromCodePoint(code);
    const replaced = normalizeUnicode(char);
    for (let k = 0; k < replaced.length; k++) map.push(i);
    normalized += replaced;
    i += char.length;
  }
  map.push(text.length);
  return { normalized, map };
}

/** Similarity of two strings from 0 to 1 (Dice coefficient over character bigrams). */
export function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const grams = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) {
    const gram = a.slice(i, i + 2);
    grams.set(gram, (grams.get(gram) ?? 0) + 1);
  }
  let shared = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const gram = b.slice(i, i + 2);
    const count = grams.get(gram) ?? 0;
    if (count > 0) {
      shared++;
      grams.set(gram, count - 1);
    }
  }
  return (2 * shared) / (a.length - 1 + b.length - 1);
}

const strategies: ReadonlyArray<[StrategyName, Strategy]> = [
  ["exact", (text, pattern) => ({ spans: allIndexes(text, pattern) })],
  // Trailing whitespace is the drift a model cannot see.
  [
    "line_trimmed",
    (_text, pattern, index) => ({ spans: lineWindows(index, pattern, (a, b) => a.trimEnd() === b.trimEnd()) }),
  ],
  [
    "whitespace_normalized",
    (text, pattern) => {
      // Runs of spaces and tabs inside a line match any run (also within a line, not only whole lines);
      // indentation stays exact, which is indentation_flexible's job.
      const lines = pattern.split("\n").map((line, k) => {
        const [, indent, body] = /^([ \t]*)(.*)$/s.exec(line)!;
        const inner = body!
          .split(/[ \t]+/)
          .map(escapeRegExp)
          .join("[ \\t]+");
        return (k === 0 ? "" : escapeRegExp(indent!)) + inner;
      });
      if (!/\S[ \t]+\S/.test(pattern)) return undefined;
      const regex = new RegExp(lines.join("\n"), "g");
      return {
        spans: Array.from(text.matchAll(regex), (m) => ({ start: m.index, end: m.index + m[0].length })).filter(
          (s) => s.end > s.start,
        ),
      };
    },
  ],
  [
    "indentation_flexible",
    (text, pattern, index) => ({
      spans: lineWindows(index, pattern, (a, b) => a.trim() === b.trim()),
      replacementFor: (span, newString) =>
        reindent(newString, indentOf(pattern), indentOf(text.slice(span.start, span.end))),
    }),
  ],
  [
    "escape_normalized",
    (text, pattern) => {
      if (!/\\[ntr]/.test(pattern)) return undefined;
      return { spans: allIndexes(text, unescapeLiterals(pattern)), unescapeReplacement: true };
    },
  ],
  [
    "trimmed_boundary",
    (text, pattern, index) => {
      const trimmed = pattern.trim();
      if (trimmed !== pattern && trimmed !== "") {
        const spans = allIndexes(text, trimmed);
        if (spans.length > 0) return { spans };
      }
      return {
        spans: lineWindows(index, pattern, (a, b, k, n) => (k === 0 || k === n - 1 ? a.trim() === b.trim() : a === b)),
      };
    },
  ],
  [
    "unicode_normalized",
    (text, pattern) => {
      const { normalized, map } = normalizeWithMap(text);
      const wanted = normalizeUnicode(pattern);
      if (normalized === text && wanted === pattern) return undefined;
      return { spans: allIndexes(normalized, wanted).map((s) => ({ start: map[s.start]!, end: map[s.end]! })) };
    },
  ],
  [
    "block_anchor",
    (_text, pattern, index) => {
      // First and last lines anchor the block; the middle may have drifted.
      const { lines: wanted, trailingNewline } = patternLines(pattern);
      if (wanted.length < 3) return undefined;
      const key = (line: string): string => normalizeUnicode(line).trim();
      const first = key(wanted[0]!);
      const last = key(wanted[wanted.length - 1]!);
      if (first === "" || last === "") return undefined;
      const middle = wanted.slice(1, -1).map(key).join("\n");
      const maxLines = wanted.length * 2 + 5;
      const lineCount = realLineCount(index);
      const candidates: Array<{ span: Span; score: number }> = [];
      for (let i = 0; i < lineCount; i++) {
        if (key(index.lines[i]!) !== first) continue;
        for (let j = i + 2; j < Math.min(lineCount, i + maxLines); j++) {
          if (key(index.lines[j]!) !== last) continue;
          const score = similarity(
            index.lines
              .slice(i + 1, j)
              .map(key)
              .join("\n"),
            middle,
          );
          const span = index.span(i, j - i + 1);
          if (trailingNewline && j + 1 < index.lines.length) span.end += 1;
          candidates.push({ span, score });
          break;
        }
      }
      const threshold = candidates.length === 1 ? 0.1 : 0.3;
      return { spans: candidates.filter((c) => c.score >= threshold).map((c) => c.span) };
    },
  ],
  [
    "context_aware",
    (_text, pattern, index) => {
      // Same number of lines, and at least half of them nearly equal.
      const { lines: wanted, trailingNewline } = patternLines(pattern);
      if (wanted.length < 2) return undefined;
      const spans: Span[] = [];
      for (let first = 0; first + wanted.length <= realLineCount(index); first++) {
        let close = 0;
        for (let k = 0; k < wanted.length; k++) {
          if (similarity(index.lines[first + k]!.trim(), wanted[k]!.trim()) >= 0.8) close++;
        }
        if (close * 2 < wanted.length) continue;
        const span = index.span(first, wanted.length);
        if (trailingNewline && first + wanted.length < index.lines.length) span.end += 1;
        spans.push(span);
        first += wanted.length - 1;
      }
      return { spans };
    },
  ],
];

export const STRATEGY_NAMES: readonly StrategyName[] = strategies.map(([name]) => name);

export interface MatchResult {
  strategy: StrategyName;
  spans: Span[];
  /** new_string as it should be inserted (escape_normalized unescapes it). */
  replacement: string;
  /** When the replacement depends on the match (indentation_flexible). */
  replacementFor?: (span: Span) => string;
}

/** The first strategy that finds `pattern`, with all its non-overlapping matches; undefined when none does. */
export function findMatches(
  text: string,
  pattern: string,
  newString: string,
  options: { lineAligned?: boolean } = {},
): MatchResult | undefined {
  const index = new LineIndex(text);
  for (const [name, strategy] of strategies) {
    const found = strategy(text, pattern, index);
    if (!found) continue;
    let spans = found.spans;
    if (options.lineAligned) spans = spans.filter((s) => s.start === 0 || text[s.start - 1] === "\n");
    if (spans.length === 0) continue;
    const replacement = found.unescapeReplacement ? unescapeLiterals(newString) : newString;
    const replacementFor = found.replacementFor;
    return {
      strategy: name,
      spans,
      replacement,
      ...(replacementFor ? { replacementFor: (span: Span) => replacementFor(span, replacement) } : {}),
    };
  }
  return undefined;
}

export type ReplaceOutcome =
  { ok: true; content: string; count: number; strategy: StrategyName } | { ok: false; error: string };

/** The whole replace operation of the patch tool, with its model-facing errors. */
export function fuzzyReplace(
  content: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
): ReplaceOutcome {
  if (oldString === "") return { ok: false, error: "old_string cannot be empty" };
  if (oldString === newString) return { ok: false, error: "old_string and new_string are identical" };
  const match = findMatches(content, oldString, newString);
  if (!match) return { ok: false, error: "Could not find a match for old_string in the file" };
  if (match.spans.length > 1 && !replaceAll) {
    return {
      ok: false,
      error: `Found ${match.spans.length} matches for old_string. Provide more context to make it unique, or use replace_all=true.`,
    };
  }
  let out = content;
  for (const span of [...match.spans].sort((a, b) => b.start - a.start)) {
    out = out.slice(0, span.start) + (match.replacementFor?.(span) ?? match.replacement) + out.slice(span.end);
  }
  return { ok: true, content: out, count: match.spans.length, strategy: match.strategy };
}
