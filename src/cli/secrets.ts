/**
 * Keeping secrets out of what the CLI prints. A config's `env` values, its
 * `secrets` and its `token` are often credentials: `sessions --json` shows env
 * names but not values, and an error message that happens to quote one is
 * scrubbed before it reaches stderr, with the same rule and mask the tools use
 * on what a model sees (core/redact.ts).
 */

import { REDACTED, Redactor } from "../core/redact.js";

const known = new Set<string>();
let redactor: Redactor | undefined;

/** Remembers a config's secret values so that printed errors can be scrubbed of them. */
export function rememberSecrets(config: unknown): void {
  if (typeof config !== "object" || config === null) return;
  const { env, token, secrets } = config as { env?: unknown; token?: unknown; secrets?: unknown };
  const add = (value: unknown): void => {
    if (typeof value !== "string" || value.length < 3) return;
    // Option errors quote a value cut at 80 characters.
    known.add(value).add(value.slice(0, 80));
    redactor = undefined;
  };
  if (typeof env === "object" && env !== null) Object.values(env).forEach(add);
  if (Array.isArray(secrets)) secrets.forEach(add);
  add(token);
}

/** The text with every remembered secret (and every well-known key shape) masked. */
export function redactText(text: string): string {
  redactor ??= new Redactor(known, { minValueChars: 3 });
  return redactor.redact(text);
}

/** A copy of a config to show: env names kept, their values, the secrets and any token hidden. */
export function redactConfig<T>(config: T): T {
  if (typeof config !== "object" || config === null) return config;
  const copy = { ...config } as Record<string, unknown>;
  if (typeof copy.env === "object" && copy.env !== null)
    copy.env = Object.fromEntries(Object.keys(copy.env).map((name) => [name, REDACTED]));
  if (Array.isArray(copy.secrets)) copy.secrets = copy.secrets.map(() => REDACTED);
  if (copy.token !== undefined) copy.token = REDACTED;
  return copy as T;
}
