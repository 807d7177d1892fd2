/**
 * Shellwright's own credentials: the variables that hold the bearer tokens of
 * `shellwright serve` and `shellwright mcp --http` (and the gateway client).
 * They authorize whoever holds them to run commands through a server, so a
 * session must never see them: the model inside could read and reuse them,
 * and a local session's snapshot would write them to disk. They are dropped
 * from every environment a session starts from, and refused when passed in
 * `env` or `forwardEnv`.
 */

/** Where `shellwright serve` and the `gateway` backend look for the gateway token. */
export const GATEWAY_TOKEN_ENV_VAR = "SHELLWRIGHT_GATEWAY_TOKEN";
/** Where `shellwright mcp --http` looks for its token. */
export const MCP_TOKEN_ENV_VAR = "SHELLWRIGHT_MCP_TOKEN";

export const CREDENTIAL_ENV_VARS: readonly string[] = [GATEWAY_TOKEN_ENV_VAR, MCP_TOKEN_ENV_VAR];

export function isCredentialEnvVar(name: string): boolean {
  return CREDENTIAL_ENV_VARS.includes(name);
}

/** A copy of `env` without Shellwright's credentials: what a session or a child process may inherit. */
export function withoutCredentials(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const name of CREDENTIAL_ENV_VARS) delete copy[name];
  return copy;
}

/**
 * Removes the credentials from this process's own environment, once a server
 * has read its token: every child it starts afterwards (bash, ssh, docker,
 * rsync, apptainer) inherits process.env, and none of them needs the token.
 */
export function scrubCredentials(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of CREDENTIAL_ENV_VARS) delete env[name];
}

/** Why a session may not be given `name`, for an InvalidOptionError; the value is never part of it. */
export function credentialRefusal(option: string, name: string): string {
  return `${option} names ${name}, Shellwright's own credential: it never enters a session, where the commands could read it. Pass the value under another name if a command really needs it.`;
}
