/**
 * The HTTP APIs `shellwright serve` speaks on its one port (`apis`, `--api`):
 * its own and, when asked, other clients' APIs. Each claims its own paths;
 * a request goes to the first API that claims it, Shellwright's own last
 * (it answers every other path, with its 404).
 */

import { InvalidOptionError } from "../core/errors.js";
import { describe } from "../core/options.js";
import { handle, type RouteContext } from "./routes.js";
import { e2bApi } from "./e2b/api.js";
import type { ServedApi } from "./served-api.js";

export type { ServedApi };

type ApiFactory = (ctx: RouteContext) => ServedApi;

const FACTORIES = {
  shellwright: (ctx: RouteContext): ServedApi => ({
    claims: () => true,
    handle: (req, res) => handle(ctx, req, res),
  }),
  e2b: e2bApi,
} satisfies Record<string, ApiFactory>;

export type ApiName = keyof typeof FACTORIES;
export const API_NAMES = Object.keys(FACTORIES) as ApiName[];
export const DEFAULT_APIS: readonly ApiName[] = ["shellwright"];

/** `apis` validated: a non-empty list of known names, each once. */
export function apiNames(value: unknown): ApiName[] {
  if (value === undefined) return [...DEFAULT_APIS];
  if (!Array.isArray(value) || value.length === 0)
    throw new InvalidOptionError("apis", `apis must be a non-empty array of API names, got ${describe(value)}`);
  const seen = new Set<string>();
  for (const name of value) {
    if (typeof name !== "string" || !(API_NAMES as string[]).includes(name))
      throw new InvalidOptionError("apis", `Unknown API ${describe(name)} in apis; available: ${API_NAMES.join(", ")}`);
    if (seen.has(name)) throw new InvalidOptionError("apis", `apis names ${describe(name)} twice`);
    seen.add(name);
  }
  return value as ApiName[];
}

/** The APIs in the order requests try them: Shellwright's own, which claims every path, last. */
export function servedApis(names: readonly ApiName[], ctx: RouteContext): ServedApi[] {
  const ordered = [
    ...names.filter((name) => name !== "shellwright"),
    ...names.filter((name) => name === "shellwright"),
  ];
  return ordered.map((name) => FACTORIES[name](ctx));
}
