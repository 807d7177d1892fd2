/**
 * A view of a Session that adds a caller's interrupt signal and output
 * listener to every command a tool runs.
 *
 * A server (MCP, the AI SDK) knows when a call is cancelled and wants its
 * output as it arrives; a tool only knows its Session. Wrapping the session
 * gives every tool cancellation and progress without each tool having to
 * forward them, and a tool that does pass its own signal or listener keeps it.
 */

import type { ExecuteOptions, ExecuteResult, Session } from "../core/session.js";

export interface Observers {
  /** Interrupts every command started through the view. */
  signal?: AbortSignal | undefined;
  /** Receives the output of every command started through the view. */
  onOutput?: ((text: string) => void) | undefined;
}

export function observeSession(session: Session, observers: Observers): Session {
  const { signal, onOutput } = observers;
  if (signal === undefined && onOutput === undefined) return session;

  const execute = (command: string, options: ExecuteOptions = {}): Promise<ExecuteResult> => {
    const merged: ExecuteOptions = { ...options };
    if (signal !== undefined) merged.signal = options.signal === undefined ? signal : AbortSignal.any([signal, options.signal]);
    if (onOutput !== undefined) {
      const own = options.onOutput;
      merged.onOutput = own === undefined ? onOutput : (text) => {
        own(text);
        onOutput(text);
      };
    }
    return session.execute(command, merged);
  };

  // Session keeps its state in #private fields, so members must run with the
  // real session as `this`, not the proxy.
  return new Proxy(session, {
    get(target, property) {
      if (property === "execute") return execute;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
