/** What a call's end marker (or the fast path's exit report) says about the session's state. */

/**
 * `N`: the call completed but committed nothing. `C<stamp>:<cwd>`: it
 * committed; the cwd is %-encoded (`%` and newline only) and the stamp is the
 * backend's clock just before a remote rename (empty where Node renames).
 */
export interface MarkerPayload {
  committed: boolean;
  cwd?: string;
  stamp?: number;
  /** `F<why>`: the call completed but its state could not be saved; why, in words. */
  saveFailed?: string;
}

/**
 * Why a dump failed, from what SAVE_FAILED wrote after `#F STATUS ` (or
 * the helper's `rename`, `write` or `size`): `open`, `limit` or `write`, then the hard `ulimit -f`.
 */
export function describeSaveFailure(code: string): string {
  const [why, hardLimit] = code.split(" ");
  if (why === "open") return "its file could not be opened (too few open files under `ulimit -n`?)";
  if (why === "limit") return "the file size limit (`ulimit -f`) is too small for it";
  if (why === "rename") return "it could not be moved into place";
  if (why === "size") return "it is over the fast path's limit of 64 MiB";
  if (hardLimit !== undefined && /^[0-9]+$/.test(hardLimit))
    return `the file size limit (\`ulimit -f ${hardLimit}\`) is too small for it`;
  return "writing it failed (is the state directory full?)";
}

/** A cwd as the marker and the helper's exit frame carry it: only `%` and newline are %-encoded. */
export function decodeCwd(encoded: string): string {
  return encoded.replace(/%(25|0A)/g, (_, code: string) => (code === "25" ? "%" : "\n"));
}

export function parseMarkerPayload(payload: string): MarkerPayload {
  if (payload.startsWith("F")) return { committed: false, saveFailed: describeSaveFailure(payload.slice(1)) };
  const match = /^C([0-9.,]*):([\s\S]*)$/.exec(payload);
  if (match === null) return { committed: false };
  const cwd = decodeCwd(match[2]!);
  // EPOCHREALTIME follows the locale's decimal separator.
  const stamp = match[1] === "" ? undefined : Number(match[1]!.replace(",", "."));
  return { committed: true, cwd, ...(stamp === undefined || Number.isNaN(stamp) ? {} : { stamp }) };
}
