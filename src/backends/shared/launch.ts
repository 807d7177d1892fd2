/**
 * How a remote backend starts `bash -c SCRIPT`: the argv and the stdin bytes.
 *
 * A script is one argv string, and argv is capped (128 KiB per string on
 * Linux, 64 KiB in all for a Modal exec). A script over the limit is sent on
 * stdin instead, ahead of the command's own stdin data: a tiny launcher reads
 * exactly that many bytes and `eval`s them, and the command then reads the
 * rest of stdin untouched.
 */

import { markAssignments, type CallMarks } from "../../core/call-marks.js";
import type { RunOptions } from "../../core/transport.js";

export interface Launch {
  argv: string[];
  /** Bytes for the process's stdin; undefined = nothing to send (close it at once). */
  stdin: Uint8Array | undefined;
}

export function bashLaunch(
  script: string,
  options: Pick<RunOptions, "cleanEnv" | "stdin">,
  maxInlineBytes: number,
  marks?: CallMarks,
): Launch {
  // `env -i` gives the same empty environment the local backend gets: once the
  // snapshot exists it is the whole truth about exported variables.
  // SHLVL=1: stdin from Node is a socket, and a non-login `bash -c` at level 1
  // with a socket on stdin thinks sshd started it and sources ~/.bashrc. The
  // snapshot restores the real SHLVL.
  // The marks (a command's processes, however they detach, carry them) go on
  // `env`'s command line: the exec APIs give no other way to add them.
  const assignments = marks === undefined ? [] : markAssignments(marks);
  const prefix = options.cleanEnv
    ? ["env", "-i", "SHLVL=1", ...assignments, "bash"]
    : assignments.length > 0
      ? ["env", ...assignments, "bash"]
      : ["bash"];
  const scriptBytes = Buffer.from(script, "utf8");
  if (scriptBytes.length <= maxInlineBytes) {
    return { argv: [...prefix, "-c", script], stdin: options.stdin };
  }
  // LC_ALL=C makes `read -N` count bytes; bash reads a pipe one byte at a time
  // here, so the command's own stdin is left exactly where the script ends.
  const launcher = `IFS= LC_ALL=C builtin read -r -d '' -N ${scriptBytes.length} __sw_script; builtin eval "$__sw_script"`;
  const stdin = options.stdin === undefined ? scriptBytes : Buffer.concat([scriptBytes, options.stdin]);
  return { argv: [...prefix, "-c", launcher], stdin };
}
