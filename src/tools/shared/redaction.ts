/**
 * Secret redaction in what a model sees, the tools' side: which redactor a
 * tool call uses (none when `redactSecrets` is off), and masking a whole
 * result or a stream of output with it. The masking rule itself is
 * core/redact.ts, shared with the CLI.
 */

import type { Environment } from "../../core/environment.js";
import { Redactor, StreamRedactor } from "../../core/redact.js";
import { AnsiStream } from "./ansi-stream.js";

const cache = new WeakMap<Environment, { values: readonly string[] | undefined; redactor: Redactor }>();

/** The session's redactor, or undefined when the call's settings turn redaction off. */
// Structural, not ToolContext: tool-definition.ts imports this module.
export function redactorFor(context: {
  session: Environment;
  settings?: { redactSecrets?: boolean } | undefined;
}): Redactor | undefined {
  if (context.settings?.redactSecrets === false) return undefined;
  const { session } = context;
  const cached = cache.get(session);
  if (cached !== undefined && cached.values === session.secretValues) return cached.redactor;
  const redactor = new Redactor(session.secretValues ?? []);
  cache.set(session, { values: session.secretValues, redactor });
  return redactor;
}

/** Every string in the result masked (nested lists and objects too); the result itself is not changed. */
export function redactResult<T extends object>(result: T, redactor: Redactor | undefined): T {
  return redactor === undefined ? result : (redactValue(result, redactor) as T);
}

function redactValue(value: unknown, redactor: Redactor): unknown {
  if (typeof value === "string") return redactor.redact(value);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, redactor));
  if (typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactValue(item, redactor)]));
  }
  return value;
}

/**
 * `onOutput` wrapped so that what it receives is masked, a secret split
 * between two chunks included; call end() when the output is over. Escape
 * sequences are removed first, as from a result before it is masked: a
 * secret split by one (`printf "%s\033[0m%s"`) is masked in the stream as
 * in the result.
 */
export function redactingOutput(
  onOutput: ((text: string) => void) | undefined,
  redactor: Redactor | undefined,
): { onOutput: ((text: string) => void) | undefined; end(): void } {
  if (onOutput === undefined || redactor === undefined) return { onOutput, end: () => undefined };
  const ansi = new AnsiStream();
  const stream = new StreamRedactor(redactor);
  return {
    onOutput: (text) => {
      const shown = stream.push(ansi.push(text));
      if (shown !== "") onOutput(shown);
    },
    end: () => {
      const rest = stream.push(ansi.end()) + stream.end();
      if (rest !== "") onOutput(rest);
    },
  };
}
