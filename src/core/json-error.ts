/**
 * What is wrong with a JSON text, without quoting it. V8's JSON.parse
 * messages can repeat a stretch of the input (`Unexpected token 's',
 * "{"env": sk-live-…}" is not valid JSON`), and a config file or request body
 * may hold env values: the message says where the text breaks instead.
 */

export function jsonSyntaxProblem(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const offset = /at position (\d+)/.exec(message)?.[1];
  // Only V8's fixed wording is kept: everything from the first quote on may be the input.
  const kind =
    message.replace(/\s*(?:in JSON )?at position \d+.*$/s, "").replace(/\s*['",(].*$/s, "") || "invalid JSON";
  if (offset === undefined) return kind;
  const before = text.slice(0, Number(offset));
  const line = before.split("\n").length;
  const column = before.length - before.lastIndexOf("\n");
  return `${kind} at line ${line}, column ${column}`;
}
