/** Quoting for the bash the scripts run: pure, shared by every script builder. */

/** Single-quote a string for bash: correct for every input, including newlines and NULs-free binary. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** Quote a cwd for `cd`, leaving a leading `~` for bash to expand on the backend. */
export function quoteCwd(cwd: string): string {
  if (cwd === "~") return "~";
  if (cwd.startsWith("~/")) return cwd.length === 2 ? "~/" : `~/${shellQuote(cwd.slice(2))}`;
  return shellQuote(cwd);
}
