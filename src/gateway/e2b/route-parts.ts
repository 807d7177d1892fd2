/** What every route of E2B's control API checks the same way: its method, and an id taken from its path. */

import { E2bError } from "./errors.js";

export function allow(method: string, expected: string): void {
  if (method !== expected) throw new E2bError(405, `Method ${method} is not allowed here; use ${expected}`);
}

export function decodedId(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new E2bError(400, `The id in the path has malformed percent-encoding: ${JSON.stringify(segment)}`);
  }
}
