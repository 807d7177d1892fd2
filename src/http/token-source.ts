/**
 * Where a server's token comes from: a private file or an environment
 * variable, never a command-line flag (a flag shows in `ps`). The file must
 * be private to the user running the server, as ssh insists for a key: a
 * token other users can read is not a secret.
 */

import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { InvalidOptionError } from "../core/errors.js";
import { tokenProblem } from "./bearer-token.js";

/** The token file or variable is unusable; the message says how to fix it and never contains the token. */
export class TokenSourceError extends InvalidOptionError {
  override readonly name = "TokenSourceError";
}

export interface TokenSource {
  /** Read the token from this file (which must be private); wins over the variable. */
  tokenFile?: string | undefined;
  /** The environment variable that holds the token otherwise, e.g. SHELLWRIGHT_GATEWAY_TOKEN. */
  envVar: string;
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
}

/**
 * The token from `tokenFile` or else from `$envVar`, surrounding whitespace
 * (a file's final newline) removed; undefined when neither is set.
 */
export function loadToken(source: TokenSource): string | undefined {
  const { tokenFile, envVar, env = process.env } = source;
  let token: string;
  let from: string;
  if (tokenFile !== undefined) {
    from = `token file ${tokenFile}`;
    token = readPrivateFile(tokenFile).trim();
  } else {
    from = `$${envVar}`;
    const value = env[envVar];
    if (value === undefined || value === "") return undefined;
    token = value.trim();
  }
  const problem = tokenProblem(token);
  if (problem !== undefined)
    throw new TokenSourceError(tokenFile === undefined ? envVar : "tokenFile", `The token from ${from} ${problem}`);
  return token;
}

/** Checked on the open file rather than its path, so the file cannot be swapped between the check and the read. */
function readPrivateFile(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (error) {
    throw new TokenSourceError("tokenFile", `Cannot read the token file ${file}: ${(error as Error).message}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new TokenSourceError("tokenFile", `The token file ${file} is not a regular file`);
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) {
      throw new TokenSourceError(
        "tokenFile",
        `The token file ${file} belongs to uid ${stat.uid}, not to the user running this server (uid ${uid}); use a token file that user owns, with mode 600`,
      );
    }
    const mode = stat.mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new TokenSourceError(
        "tokenFile",
        `The token file ${file} is open to other users (mode ${mode.toString(8).padStart(3, "0")}); make it private with: chmod 600 ${shellWord(file)}`,
      );
    }
    return readFileSync(fd, "utf8");
  } catch (error) {
    if (error instanceof TokenSourceError) throw error;
    throw new TokenSourceError("tokenFile", `Cannot read the token file ${file}: ${(error as Error).message}`);
  } finally {
    closeSync(fd);
  }
}

/** The path as the user would type it in a shell, for the fix in a message. */
const shellWord = (text: string): string => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`);
