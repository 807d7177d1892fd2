/**
 * Output a native tool hands a model, bounded as the terminal tool bounds
 * it: secrets masked first (so neither the saved file nor the cut holds one),
 * then, above the limit, the whole text saved into the backend and a head and
 * a tail shown with the cut and the file's path said between them.
 */

import type { ExecuteOptions, ExecuteResult } from "../../core/environment.js";
import { truncationNotice } from "../../core/output.js";
import { redactorFor } from "../shared/redaction.js";
import { saveText } from "../shared/result-persistence.js";
import { cutHeadTail, stripAnsi, TextCapture } from "../shared/text.js";
import type { HandlerContext } from "../shared/tool-definition.js";

export async function boundedText(text: string, limitChars: number, context: HandlerContext): Promise<string> {
  let shown = stripAnsi(text);
  shown = redactorFor(context)?.redact(shown) ?? shown;
  if (shown.length <= limitChars) return shown;
  const { session, settings } = context;
  const saved = await saveText(session, shown, {
    settings,
    ...(context.callId === undefined ? {} : { id: `${context.callId}-${Math.random().toString(16).slice(2, 8)}` }),
  });
  const where =
    saved === undefined
      ? "the full output could not be saved"
      : saved.where === "backend"
        ? `Full output saved to ${saved.path}; read parts of it with sed -n, head or tail`
        : `Full output saved on the host, outside the backend: ${saved.path}`;
  return cutHeadTail(shown, limitChars, settings.inlineHeadFraction, (_omitted, _total, omittedText) =>
    truncationNotice(Buffer.byteLength(omittedText), Buffer.byteLength(shown), where),
  ).text;
}

/**
 * Runs a command in the session and returns its whole output (up to the
 * settings' captureOutputChars, beyond which head and tail are kept): the
 * session itself keeps only its own output limit. The session's notices
 * (a timeout, an interrupt) are not part of it; the result says those.
 */
export async function runCaptured(
  command: string,
  options: ExecuteOptions,
  context: HandlerContext,
): Promise<{ result: ExecuteResult; text: string }> {
  const capture = new TextCapture(context.settings.captureOutputChars);
  const result = await context.session.execute(command, {
    ...options,
    ...(context.signal === undefined ? {} : { signal: context.signal }),
    onOutput: (text) => {
      capture.push(text);
      context.onOutput?.(text);
    },
  });
  const text = result.output.startsWith("[binary output,") ? result.output : capture.text();
  return { result, text };
}
