/**
 * A unified diff (`--- a/p`, `+++ b/p`, `@@` hunks with three lines of
 * context) between two texts. Common head and tail lines are skipped first, so
 * a one-line edit of a 10 000-line file costs nothing; the rest is Myers' O(ND)
 * algorithm, with a plain "replace the middle" fallback for huge rewrites.
 */

type Op = { kind: " " | "-" | "+"; line: string };

const MAX_EDIT_DISTANCE = 4000;

/** Marks a last line that has no newline, so "x" and "x\n" differ, as they do for patch(1). */
const NO_EOL = "\u0000no-eol";

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  else lines[lines.length - 1] += NO_EOL;
  return lines;
}

/** The shortest edit script between a and b (Myers), or undefined when it is longer than `limit`. */
function myers(a: readonly string[], b: readonly string[], limit: number): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, limit);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, a, b, offset, d);
    }
  }
  return undefined;
}

function backtrack(
  trace: Int32Array[],
  a: readonly string[],
  b: readonly string[],
  offset: number,
  dEnd: number,
): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = dEnd; d > 0; d--) {
    const v = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = v[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: " ", line: a[--x]! });
      y--;
    }
    if (x === prevX) ops.push({ kind: "+", line: b[--y]! });
    else ops.push({ kind: "-", line: a[--x]! });
  }
  while (x > 0 && y > 0) {
    ops.push({ kind: " ", line: a[--x]! });
    y--;
  }
  return ops.reverse();
}

function editScript(a: readonly string[], b: readonly string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const middle = myers(midA, midB, MAX_EDIT_DISTANCE) ?? [
    ...midA.map((line) => ({ kind: "-" as const, line })),
    ...midB.map((line) => ({ kind: "+" as const, line })),
  ];
  return [
    ...a.slice(0, head).map((line) => ({ kind: " " as const, line })),
    ...middle,
    ...a.slice(a.length - tail).map((line) => ({ kind: " " as const, line })),
  ];
}

/** A path as a diff header names it: `a/src/x.ts`, and `a/tmp/x` for `/tmp/x` as git writes it, never `a//tmp/x`. */
export const diffPath = (side: "a" | "b", path: string): string => `${side}/${path.replace(/^\/+/, "")}`;

export function unifiedDiff(before: string, after: string, path: string, context = 3): string {
  if (before === after) return "";
  const ops = editScript(splitLines(before), splitLines(after));
  const out = [`--- ${diffPath("a", path)}`, `+++ ${diffPath("b", path)}`];
  let i = 0;
  while (i < ops.length) {
    if (ops[i]!.kind === " ") {
      i++;
      continue;
    }
    // A hunk: from `context` lines before this change to `context` after the last change that is close enough.
    const start = Math.max(0, i - context);
    let end = i;
    while (end < ops.length) {
      if (ops[end]!.kind !== " ") {
        end++;
        continue;
      }
      let run = end;
      while (run < ops.length && ops[run]!.kind === " ") run++;
      if (run === ops.length || run - end > 2 * context) break;
      end = run;
    }
    const stop = Math.min(ops.length, end + context);
    let oldLine = 1;
    let newLine = 1;
    for (let k = 0; k < start; k++) {
      if (ops[k]!.kind !== "+") oldLine++;
      if (ops[k]!.kind !== "-") newLine++;
    }
    const hunk = ops.slice(start, stop);
    const oldCount = hunk.filter((op) => op.kind !== "+").length;
    const newCount = hunk.filter((op) => op.kind !== "-").length;
    out.push(
      `@@ -${oldCount === 0 ? oldLine - 1 : oldLine},${oldCount} +${newCount === 0 ? newLine - 1 : newLine},${newCount} @@`,
    );
    for (const op of hunk) {
      if (op.line.endsWith(NO_EOL))
        out.push(`${op.kind}${op.line.slice(0, -NO_EOL.length)}`, "\\ No newline at end of file");
      else out.push(`${op.kind}${op.line}`);
    }
    i = stop;
  }
  return `${out.join("\n")}\n`;
}
