/**
 * Starts a fixture script that plays a session's owner process (a Node program
 * the test can kill) and resolves with the one JSON line it prints once its
 * sessions are open. Its pid goes into `started` at once, for the test's
 * cleanup to kill even when it never reports.
 */

import { spawn, type ChildProcess } from "node:child_process";

export async function startOwnerFixture<Report>(
  fixture: string,
  args: readonly string[],
  started: Set<number>,
  env?: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; report: Report }> {
  const child = spawn(process.execPath, [fixture, ...args], {
    ...(env === undefined ? {} : { env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.add(child.pid!);
  let out = "";
  let err = "";
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const report = await new Promise<Report>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("\n")) resolve(JSON.parse(out) as Report);
    });
    child.once("exit", (code) => reject(new Error(`the owner exited (${code}) before reporting: ${err}`)));
  });
  return { child, report };
}
