/**
 * What `shellwright run` shows on stderr while a step runs: its output as it
 * arrives, under one line that names the step, and ended by a newline, so
 * the next step's line starts on a line of its own.
 */

export class StepProgress {
  #step: number | undefined;
  #endsLine = true;

  constructor(private readonly print: (text: string) => void) {}

  write(step: number, tool: string, text: string): void {
    if (text === "") return;
    if (this.#step !== step) {
      this.end();
      this.#step = step;
      this.print(`shellwright run: step ${step} (${tool}):\n`);
    }
    this.print(text);
    this.#endsLine = text.endsWith("\n");
  }

  /** The running step is over. */
  end(): void {
    if (this.#step !== undefined && !this.#endsLine) this.print("\n");
    this.#step = undefined;
    this.#endsLine = true;
  }
}
