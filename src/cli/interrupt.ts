/**
 * SIGINT, SIGTERM and SIGHUP as an AbortSignal: a subcommand passes it to the
 * library, which kills the command's process tree, and then cleans up and
 * exits 128 + the signal's number, as a shell does. A second signal while
 * cleaning up exits at once.
 */

const EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
type Caught = keyof typeof EXIT_CODES;

export interface Interrupt {
  readonly signal: AbortSignal;
  /** 130, 143 or 129 once a signal came; undefined before. */
  exitCode(): number | undefined;
  dispose(): void;
}

export function catchInterrupts(): Interrupt {
  const controller = new AbortController();
  let caught: Caught | undefined;
  const handlers = (Object.keys(EXIT_CODES) as Caught[]).map((name) => {
    const handler = (): void => {
      if (caught !== undefined) process.exit(EXIT_CODES[caught]);
      caught = name;
      controller.abort();
    };
    process.on(name, handler);
    return [name, handler] as const;
  });
  return {
    signal: controller.signal,
    exitCode: () => (caught === undefined ? undefined : EXIT_CODES[caught]),
    dispose: () => {
      for (const [name, handler] of handlers) process.off(name, handler);
    },
  };
}
