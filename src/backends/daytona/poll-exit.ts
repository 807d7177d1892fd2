/**
 * A Daytona session command's exit code: the SDK only answers when asked, so
 * it is polled, quickly at first, then every half second.
 */

/** Polls until there is an exit code; `givenUp` (the call was killed long ago) ends the wait with an error. */
export async function pollExitCode(
  get: () => Promise<{ exitCode?: number }>,
  logsDone: () => boolean,
  givenUp: () => boolean,
): Promise<number> {
  let delay = 20;
  for (;;) {
    if (givenUp()) throw new Error("the command did not end after its kill");
    const { exitCode } = await get();
    if (exitCode !== undefined && exitCode !== null) return exitCode;
    await new Promise((resolve) => setTimeout(resolve, logsDone() ? 20 : delay));
    delay = Math.min(delay * 2, 500);
  }
}
