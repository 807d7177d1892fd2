/**
 * How the e2b backend gets its sandbox through E2B's SDK (an optional peer dependency, loaded at the first
 * sandbox): a new one from the template, an existing one connected to by id, a fork's child adopted, or a new one
 * from a snapshot (a rollback's).
 */

import type * as E2bSdk from "e2b";
import { BackendUnavailableError } from "../../core/errors.js";
import { messageOf } from "../shared/error-message.js";
import type { E2bTransportOptions } from "./config.js";
import type { E2bSandbox, E2bSandboxClass } from "./sdk.js";

export async function loadE2bSdk(): Promise<E2bSandboxClass> {
  let sdk: typeof E2bSdk;
  try {
    sdk = await import("e2b");
  } catch (error) {
    throw new BackendUnavailableError(
      `The e2b backend needs E2B's SDK, which is not installed: run \`npm install e2b\` (${messageOf(error)})`,
      { cause: error, backend: "e2b" },
    );
  }
  // The compiler checks the SDK's class against the subset this backend calls (sdk.ts).
  const sandboxClass: E2bSandboxClass = sdk.Sandbox;
  return sandboxClass;
}

/** The session's sandbox as its config says: adopted (a fork's child), connected to, or created. */
export async function acquireSandbox(sdk: E2bSandboxClass, options: E2bTransportOptions): Promise<E2bSandbox> {
  if (options.forked !== undefined) return options.forked.sandbox;
  if (options.sandboxId !== undefined)
    return sdk.connect(options.sandboxId, {
      ...options.connection,
      ...(options.renewTimeout ? { timeoutMs: options.sandboxTimeoutMs } : {}),
    });
  return sandboxFrom(sdk, options.template, options);
}

/** A new sandbox of the session's config from a template, or from a snapshot (its envs given again, as at creation). */
export function sandboxFrom(sdk: E2bSandboxClass, template: string, options: E2bTransportOptions): Promise<E2bSandbox> {
  return sdk.create(template, {
    ...options.connection,
    timeoutMs: options.sandboxTimeoutMs,
    metadata: { ...options.metadata },
    ...(Object.keys(options.env).length > 0 ? { envs: { ...options.env } } : {}),
  });
}
