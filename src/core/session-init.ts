/**
 * A session's first snapshot, the one-time bootstrap (docs/architecture.md):
 * dumped from a login shell, or, when the transport names its origin
 * (`loginOrigin`), copied from this process's capture of that origin's login
 * while the profile files are unchanged (login-snapshots.ts). Session runs it
 * at open, after a failed one timed out, and in a replaced container.
 */

import { BackendUnavailableError, InvalidOptionError } from "./errors.js";
import { describe } from "./options.js";
import { buildInitScript, pendingPaths, type ScriptPlan } from "./script.js";
import { newId, newSecret, withSecret } from "./call-secret.js";
import { buildSnapshotReadScript, loginReuseLines, takeFingerprint } from "./login-script.js";
import { loginSnapshots } from "./login-snapshots.js";
import type { CollectSettings, RunOutcome } from "./collect-call.js";
import type { SessionPaths } from "./environment.js";
import type { RunOptions, Transport } from "./transport.js";

/** A capture is read back through the call's output: this much at most (a larger snapshot is not captured). */
const MAX_CAPTURE_BYTES = 64 * 1024 * 1024;

/** What the bootstrap needs of its session. */
export interface InitHost {
  readonly transport: Transport;
  readonly sessionId: string;
  readonly paths: SessionPaths;
  readonly options: { cwd: string; initTimeoutMs: number; warn: (message: string) => void };
  plan(callId: string): ScriptPlan;
  /** Runs a script as one call keyed by `secret` (the session's plain-path run). */
  run(
    script: string,
    runOptions: RunOptions,
    limits: { timeoutMs: number; secret: string },
    settings?: Partial<CollectSettings>,
  ): Promise<RunOutcome>;
  /** Commits the call's dump; the session's cwd after it, or undefined. */
  settle(outcome: RunOutcome, callId: string, dumpedSnapshot: boolean): string | undefined;
}

/** `cwd`: the snapshot is there. `retry`: it timed out, and is tried once more at the next call. */
export type InitResult = { cwd: string } | { retry: true } | undefined;

interface LoginRun {
  outcome: RunOutcome;
  callId: string;
  /** The profile files as the init saw them; undefined when it could not say. */
  fingerprint: string | undefined;
  /** The snapshot came from a capture. */
  reused: boolean;
}

export async function initSession(host: InitHost, retried: boolean): Promise<InitResult> {
  // A capture goes on the call's stdin: a backend that embeds stdin in the script does not take it.
  const origin = host.transport.stdinMode === "pipe" ? host.transport.loginOrigin : undefined;
  if (origin === undefined) return settleInit(host, await login(host, undefined), retried);
  const key = `${origin}\n${host.options.cwd}`;
  return loginSnapshots.open(key, async () => {
    const run = await login(host, key);
    const result = settleInit(host, run, retried);
    if (result !== undefined && "cwd" in result && !run.reused && run.fingerprint !== undefined)
      await capture(host, key, run.fingerprint);
    return result;
  });
}

async function login(host: InitHost, key: string | undefined): Promise<LoginRun> {
  const cached = key === undefined ? undefined : loginSnapshots.get(key);
  const callId = newId();
  const secret = newSecret();
  const plan = host.plan(callId);
  const embedded = host.transport.stdinMode === "heredoc";
  const script = buildInitScript({
    ...plan,
    cwd: host.options.cwd,
    reportPid: host.transport.needsRemotePid === true,
    ...(embedded ? { embeddedStdin: withSecret(secret, undefined) } : {}),
    ...(key === undefined
      ? {}
      : {
          prelude: loginReuseLines({
            pending: pendingPaths(host.paths, callId).snapshot,
            snapshot: host.paths.snapshot,
            renameInScript: plan.renameInScript,
            expected: cached?.fingerprint,
          }),
        }),
  });
  const outcome = await host.run(
    script,
    { cleanEnv: false, ...(embedded ? {} : { stdin: withSecret(secret, cached?.bytes) }) },
    { timeoutMs: host.options.initTimeoutMs, secret },
  );
  const { text, fingerprint } = takeFingerprint(outcome.text, secret);
  const reused = cached !== undefined && fingerprint === cached.fingerprint;
  return { outcome: { ...outcome, text }, callId, fingerprint, reused };
}

/** Reads the snapshot the login just dumped, for the next session of the same origin. */
async function capture(host: InitHost, key: string, fingerprint: string): Promise<void> {
  const secret = newSecret();
  const script = buildSnapshotReadScript({
    sessionId: host.sessionId,
    snapshot: host.paths.snapshot,
    reportPid: host.transport.needsRemotePid === true,
  });
  const outcome = await host.run(
    script,
    { cleanEnv: true, stdin: withSecret(secret, undefined) },
    { timeoutMs: host.options.initTimeoutMs, secret },
    { maxOutputBytes: MAX_CAPTURE_BYTES, outputHeadFraction: 1 },
  );
  if (outcome.exitCode !== 0 || outcome.marker?.committed !== true || outcome.truncated) return;
  const bytes = Buffer.from(outcome.text.trim(), "base64");
  if (bytes.length > 0) loginSnapshots.set(key, { fingerprint, bytes });
}

function settleInit(host: InitHost, run: LoginRun, retried: boolean): InitResult {
  const { outcome, callId } = run;
  const { transport, options } = host;
  // Done only when the snapshot was really written: exit 0 and a committed marker.
  if (outcome.exitCode === 0 && outcome.marker?.committed) {
    const cwd = host.settle(outcome, callId, true);
    if (cwd) return { cwd };
  }
  // A snapshot that could not be moved into place says so here too (settle set it).
  const saveFailed = outcome.marker?.saveFailed;
  host.settle({ ...outcome, marker: undefined }, callId, true);
  // Every call would fail to save its state too: say so now, instead of a session that loses everything.
  if (saveFailed !== undefined)
    throw new BackendUnavailableError(
      `The session's state could not be saved in ${transport.tempDir} on the ${transport.name} backend: ${saveFailed}. Free space there, or open the session with another directory for its state.`,
      { backend: transport.name },
    );
  if (outcome.exitCode === 126 && !outcome.timedOut) {
    throw new InvalidOptionError(
      "cwd",
      `cwd ${describe(options.cwd)} cannot be entered on the ${transport.name} backend: ${outcome.text.trim()}`,
    );
  }
  const why = outcome.timedOut
    ? `it timed out after ${options.initTimeoutMs} ms`
    : `exit code ${outcome.exitCode}${outcome.text.trim() ? `: ${outcome.text.trim().slice(0, 500)}` : ""}`;
  if (outcome.timedOut && !retried) {
    options.warn(`session init failed (${why}); it is tried once more at the next command`);
    return { retry: true };
  }
  options.warn(
    `session init failed (${why}); commands will run as \`bash -l -c\` without a session snapshot, so exported variables will not persist`,
  );
  return undefined;
}
