/** A promise that only rejects, when fail() is called: a call's wait() races it (DockerTransport's #fail). */
export function failable(): { failed: Promise<never>; fail: (error: unknown) => void } {
  let fail: (error: unknown) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => undefined);
  return { failed, fail };
}
