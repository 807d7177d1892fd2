/**
 * The text of anything thrown, for wrapping an SDK's error in our own: SDKs
 * reject with Error objects, strings or plain values alike.
 */

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
