/**
 * Turns a command's output into MCP progress notifications: at most one per
 * interval (the first at once, the last one's text never lost), each carrying
 * the characters seen so far and the latest line, so a client can show that a
 * long command is alive without being flooded by a chatty one.
 */

export interface ProgressUpdate {
  /** Characters of output so far; grows with every update, as MCP requires. */
  progress: number;
  /** The last non-empty line of output. */
  message: string;
}

const MAX_MESSAGE_CHARS = 200;

export class ProgressReporter {
  readonly #send: (update: ProgressUpdate) => void;
  readonly #intervalMs: number;
  #chars = 0;
  #lastLine = "";
  #lastSentAt = -Infinity;
  #sentChars = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(send: (update: ProgressUpdate) => void, intervalMs: number) {
    this.#send = send;
    this.#intervalMs = intervalMs;
  }

  report(text: string): void {
    if (this.#stopped || text.length === 0) return;
    this.#chars += text.length;
    const lines = text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "");
    if (lines.length > 0) this.#lastLine = lines[lines.length - 1]!;
    const wait = this.#lastSentAt + this.#intervalMs - performance.now();
    if (wait <= 0) this.#flush();
    else this.#timer ??= setTimeout(() => this.#flush(), wait);
  }

  /** No notification after this: the result is on its way. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #flush(): void {
    this.#timer = undefined;
    if (this.#stopped || this.#chars === this.#sentChars) return;
    this.#lastSentAt = performance.now();
    this.#sentChars = this.#chars;
    const message =
      this.#lastLine.length > MAX_MESSAGE_CHARS ? `${this.#lastLine.slice(0, MAX_MESSAGE_CHARS)}…` : this.#lastLine;
    this.#send({ progress: this.#chars, message });
  }
}
