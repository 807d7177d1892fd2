/**
 * Keeping secrets out of what the CLI prints. A config's `env` values and its
 * `token` are often credentials: `sessions --json` shows env names but not
 * values, and an error message that happens to quote one is scrubbed before
 * it reaches stderr.
 */

const HIDDEN = "[hidden]";
const known = new Set<string>();

/** Remembers a config's secret values so that printed errors can be scrubbed of them. */
export function rememberSecrets(config: unknown): void {
  if (typeof config !== "object" || config === null) return;
  const { env, token } = config as { env?: unknown; token?: unknown };
  if (typeof env === "object" && env !== null) {
    for (const value of Object.values(env)) if (typeof value === "string" && value.length >= 3) known.add(value);
  }
  if (typeof token === "string" && token.length >= 3) known.add(token);
}

/** The text with every remembered secret replaced, also as option errors quote one (JSON-escaped, cut at 80). */
export function redactText(text: string): string {
  const forms = new Set<string>();
  for (const secret of known) {
    for (const form of [secret, secret.slice(0, 80)]) {
      forms.add(form);
      forms.add(JSON.stringify(form).slice(1, -1));
    }
  }
  let out = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length))
    if (form.length >= 3) out = out.split(form).join(HIDDEN);
  return out;
}

/** A copy of a config to show: env names kept, their values and any token hidden. */
export function redactConfig<T>(config: T): T {
  if (typeof config !== "object" || config === null) return config;
  const copy = { ...config } as Record<string, unknown>;
  if (typeof copy.env === "object" && copy.env !== null)
    copy.env = Object.fromEntries(Object.keys(copy.env).map((name) => [name, HIDDEN]));
  if (copy.token !== undefined) copy.token = HIDDEN;
  return copy as T;
}
