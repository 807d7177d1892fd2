/**
 * The program of the pattern worker (pattern-worker.ts): it matches the
 * patterns of pending `wait`s against a PTY's output, off the owner's event
 * loop, with RE2 (the re2js package), whose time is linear in the text
 * whatever the pattern: no pattern can make it backtrack.
 *
 * Each watch scans the output once, in windows: the new text, cut before a
 * line end when more follows, behind the last OVERLAP characters already
 * scanned (from a line start), so a match that spans at most OVERLAP
 * characters is found wherever the pieces were cut. Output that arrives faster
 * than it can be matched is skipped beyond BACKLOG characters (said to the
 * owner). A lone `\r` counts as a line end, as a terminal shows it.
 *
 * patternWorkerMain runs inside the worker from its source text
 * (Function.prototype.toString), so it uses nothing from outside its body:
 * what it needs comes in its arguments.
 */

/** The parts of re2js the worker uses. */
export interface Re2Module {
  RE2JS: {
    compile(source: string, flags: number): { test(text: string): boolean; programSize(): number };
    translateRegExp(source: string): string;
    CASE_INSENSITIVE: number;
    DOTALL: number;
    MULTILINE: number;
    LOOKBEHINDS: number;
  };
}

export interface ScanLimits {
  /** A match that spans at most this many characters is found. */
  overlapChars: number;
  /** Characters of new text per window at most. */
  sliceChars: number;
  /** New text waiting to be matched beyond this is skipped, oldest first. */
  backlogChars: number;
  /** A watch with less than a slice waiting is scanned at most this often. */
  trickleIntervalMs: number;
}

/** From the owner: start a watch (`flags` as a RegExp's), more output for it, end it, or scan all it has now. */
export type ScanRequest =
  | { type: "add"; id: number; source: string; flags: string; text: string }
  | { type: "data"; id: number; text: string }
  | { type: "flush"; id: number }
  | { type: "drop"; id: number };

/** To the owner: the watch started (or why not), it matched, or a flush is done (with what was skipped). */
export type ScanReply =
  | { type: "added"; id: number; error?: string }
  | { type: "matched"; id: number }
  | { type: "flushed"; id: number; skippedChars: number };

interface Port {
  on(event: "message", listener: (message: ScanRequest) => void): void;
  postMessage(message: ScanReply): void;
}

export function patternWorkerMain(port: Port, re2: Re2Module, limits: ScanLimits): void {
  interface Watch {
    re: { test(text: string): boolean };
    /** The end of what was scanned, from a line start: the front of the next window. */
    overlap: string;
    pending: string[];
    pendingChars: number;
    skippedChars: number;
    lastScan: number;
  }
  const { RE2JS } = re2;
  const watches = new Map<number, Watch>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let immediate = false;

  const flagsOf = (flags: string): number =>
    (flags.includes("i") ? RE2JS.CASE_INSENSITIVE : 0) |
    (flags.includes("s") ? RE2JS.DOTALL : 0) |
    (flags.includes("m") ? RE2JS.MULTILINE : 0) |
    RE2JS.LOOKBEHINDS;

  const add = (watch: Watch, text: string): void => {
    if (text === "") return;
    watch.pending.push(text);
    watch.pendingChars += text.length;
    let excess = watch.pendingChars - limits.backlogChars;
    while (excess > 0) {
      const first = watch.pending[0]!;
      const cut = Math.min(excess, first.length);
      if (cut === first.length) watch.pending.shift();
      else watch.pending[0] = first.slice(cut);
      watch.pendingChars -= cut;
      watch.skippedChars += cut;
      excess -= cut;
      // The text skipped may end mid-line: the next window must not take its start for a line start.
      watch.overlap = "";
    }
  };

  /** Scans one window of the watch's pending text; true when it matched. */
  const scanOne = (watch: Watch): boolean => {
    let text = watch.pending.join("");
    let rest = "";
    if (text.length > limits.sliceChars) {
      let cut = text.lastIndexOf("\n", limits.sliceChars);
      if (cut <= 0) cut = limits.sliceChars;
      rest = text.slice(cut);
      text = text.slice(0, cut);
    }
    watch.pending = rest === "" ? [] : [rest];
    watch.pendingChars = rest.length;
    watch.lastScan = Date.now();
    const window = watch.overlap + text.replace(/\r/g, "\n");
    if (watch.re.test(window)) return true;
    let from = Math.max(0, window.length - limits.overlapChars);
    if (from > 0) {
      const lineStart = window.lastIndexOf("\n", from - 1) + 1;
      if (from - lineStart <= limits.overlapChars) from = lineStart;
    }
    watch.overlap = window.slice(from);
    return false;
  };

  const schedule = (): void => {
    if (immediate) return;
    let wait = Infinity;
    const now = Date.now();
    for (const watch of watches.values()) {
      if (watch.pendingChars === 0) continue;
      wait = Math.min(
        wait,
        watch.pendingChars >= limits.sliceChars ? 0 : watch.lastScan + limits.trickleIntervalMs - now,
      );
    }
    if (wait === Infinity) return;
    if (wait <= 0) {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      immediate = true;
      setImmediate(run);
    } else if (timer === undefined) {
      timer = setTimeout(() => ((timer = undefined), schedule()), wait);
    }
  };

  /** One window for each watch that is due, then back to the message queue (a drop or more data may be there). */
  function run(): void {
    immediate = false;
    const now = Date.now();
    for (const [id, watch] of watches) {
      if (watch.pendingChars === 0) continue;
      if (watch.pendingChars < limits.sliceChars && now - watch.lastScan < limits.trickleIntervalMs) continue;
      if (scanOne(watch)) {
        watches.delete(id);
        port.postMessage({ type: "matched", id });
      }
    }
    schedule();
  }

  port.on("message", (message) => {
    if (message.type === "drop") {
      watches.delete(message.id);
      return;
    }
    if (message.type === "add") {
      let re: Watch["re"];
      try {
        re = RE2JS.compile(RE2JS.translateRegExp(message.source), flagsOf(message.flags));
      } catch (error) {
        port.postMessage({ type: "added", id: message.id, error: (error as Error).message });
        return;
      }
      const watch: Watch = { re, overlap: "", pending: [], pendingChars: 0, skippedChars: 0, lastScan: 0 };
      watches.set(message.id, watch);
      port.postMessage({ type: "added", id: message.id });
      add(watch, message.text);
      // What was there before the wait began is matched at once, also when short.
      if (watch.pendingChars > 0 && scanOne(watch)) {
        watches.delete(message.id);
        port.postMessage({ type: "matched", id: message.id });
      }
      schedule();
      return;
    }
    const watch = watches.get(message.id);
    if (watch === undefined) return;
    if (message.type === "data") {
      add(watch, message.text);
      schedule();
      return;
    }
    // flush: the output has ended; match all that is left, then say so.
    while (watch.pendingChars > 0) {
      if (scanOne(watch)) {
        watches.delete(message.id);
        port.postMessage({ type: "matched", id: message.id });
        return;
      }
    }
    port.postMessage({ type: "flushed", id: message.id, skippedChars: watch.skippedChars });
  });
}
