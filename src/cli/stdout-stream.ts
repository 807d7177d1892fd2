/**
 * A command's output written to stdout as it arrives, up to an optional byte
 * cap (cut at a character boundary). It counts what it printed and what it
 * dropped, so that exec can say on stderr what was cut.
 */

export class StdoutStream {
  printedBytes = 0;
  totalBytes = 0;
  #closed = false;
  #full = false;

  /** @param maxBytes print at most this much; undefined prints everything. */
  constructor(private readonly maxBytes: number | undefined) {
    // A reader that went away (`| head`) must not crash the CLI while the command is cleaned up.
    process.stdout.on("error", () => {
      this.#closed = true;
    });
  }

  get cut(): boolean {
    return this.totalBytes > this.printedBytes;
  }

  write(text: string): void {
    const bytes = Buffer.from(text, "utf8");
    this.totalBytes += bytes.length;
    const room = this.maxBytes === undefined ? bytes.length : this.maxBytes - this.printedBytes;
    if (this.#full || room <= 0) return;
    let end = Math.min(room, bytes.length);
    // Never split a character: back up to the start of the one the cap falls in.
    if (end < bytes.length) {
      this.#full = true;
      while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
    }
    this.printedBytes += end;
    if (!this.#closed) process.stdout.write(end === bytes.length ? bytes : bytes.subarray(0, end));
  }
}
