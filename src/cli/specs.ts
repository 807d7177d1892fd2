/**
 * Every subcommand's flags, in one declarative table, and where its code is.
 * This module imports nothing heavy: `shellwright CMD --help` and a refused
 * flag are answered from here, and only the subcommand that runs is loaded.
 *
 * Naming rules, the same in every subcommand: `--config FILE.json` for backend
 * options; a duration flag ends in `-ms` (milliseconds, as in the library),
 * except exec's `--timeout SECONDS`, kept because it is what timeout(1) users
 * type; a size flag ends in `-bytes`. Old spellings stay as aliases.
 */

import { DEFAULT_GATEWAY_PORT } from "../http/gateway-protocol.js";
import type { CommandSpec, OptionSpec, ParsedCommand } from "./args.js";

export interface Subcommand {
  spec: CommandSpec;
  load: () => Promise<{ run: (parsed: ParsedCommand) => Promise<number> }>;
}

const backend: OptionSpec = {
  type: "string",
  short: "b",
  value: "NAME",
  help: "local, docker, ssh, apptainer, modal, daytona, e2b or gateway (default local)",
};
const config: OptionSpec = {
  type: "string",
  short: "c",
  value: "FILE.json",
  help: "a JSON object of backend options (image, host, env, …)",
};
const cwd: OptionSpec = { type: "string", value: "DIR", help: "the working directory" };
const maxOutput: OptionSpec = {
  type: "string",
  value: "BYTES",
  help: "output kept per command, head and tail (default 50000)",
};
const maxOutputAlias: OptionSpec = {
  type: "string",
  value: "BYTES",
  aliasOf: "max-output-bytes",
  help: "same as --max-output-bytes",
};
const port = (fallback: string): OptionSpec => ({
  type: "string",
  short: "p",
  value: "N",
  help: `port, 0 for any free one (default ${fallback})`,
});
const host: OptionSpec = { type: "string", value: "ADDR", help: "address to bind (default 127.0.0.1)" };
const tokenFile: OptionSpec = { type: "string", value: "FILE", help: "file holding the bearer token, mode 600" };
const insecure: OptionSpec = { type: "boolean", help: "serve without a token (loopback only)" };
const poolSize: OptionSpec = {
  type: "string",
  value: "N",
  help: "keep N sessions opened ahead for new clients (docs/pools.md; default none)",
};
const sandbox: OptionSpec = {
  type: "boolean",
  help: "local backend: run inside a bubblewrap sandbox (cwd writable, credential dirs hidden, no network; docs/sandbox.md)",
};

const env: OptionSpec = {
  type: "string",
  short: "e",
  multiple: true,
  value: "NAME=VALUE",
  help: "export NAME in the session first; NAME alone takes its value from here; repeatable (never on a command line)",
};
const image: OptionSpec = {
  type: "string",
  value: "IMAGE",
  help: "the image of a new docker (default with --image), apptainer, modal or daytona session",
};

export const exec: CommandSpec = {
  name: "exec",
  summary:
    "Runs one command and exits with its exit code. Output streams to stdout as it arrives. With --session the\n" +
    "session outlives this process: cwd and exported variables carry over to the next exec of that name.",
  positionals: "[--] COMMAND…",
  // exec says "no command given" itself.
  minPositionals: 0,
  maxPositionals: Infinity,
  commandTail: true,
  options: {
    backend,
    config,
    session: { type: "string", short: "s", value: "NAME", help: "a named session that outlives this process" },
    cwd: { ...cwd, help: "run the command here (the session's cwd does not move)" },
    timeout: { type: "string", short: "t", value: "SECONDS", help: "stop the command after this long (exit 124)" },
    "timeout-ms": { type: "string", value: "MS", help: "the same, in milliseconds (default 180000)" },
    "max-output-bytes": {
      type: "string",
      value: "BYTES",
      help: "print at most this much output, then say on stderr what was cut (default: all; --json 50000)",
    },
    "max-output": maxOutputAlias,
    json: { type: "boolean", help: "print nothing while it runs, then the result as one JSON object" },
    env,
    image,
    pty: {
      type: "boolean",
      help: "run it under a terminal attached to this one (an editor, a REPL): keys, Ctrl-C and the size go to it",
    },
    tty: { type: "boolean", aliasOf: "pty", help: "same as --pty" },
    sandbox,
  },
  details:
    "One word is a shell command line: exec 'cd /tmp && ls *.log'. Two or more are an argv, run as given,\n" +
    "each word quoted: exec -- touch 'my file.txt' makes one file. Piped stdin becomes the command's stdin.\n" +
    "Ctrl-C (SIGINT), SIGTERM and SIGHUP stop the command and its processes and exit 130, 143 and 129; a\n" +
    "named session stays usable. Notices (a timeout, an interrupt, cut output) go to stderr, the command's\n" +
    "output to stdout. (-t is --timeout; a terminal is --pty.)",
};

export const shell: CommandSpec = {
  name: "shell",
  summary:
    "Opens an interactive bash onto a session's backend, with the session's state. It starts in the session's\n" +
    "cwd with its variables, functions and aliases; what it changes is not saved to the session. Exits with the\n" +
    "shell's exit code.",
  positionals: "",
  minPositionals: 0,
  maxPositionals: 0,
  options: {
    backend,
    config,
    session: { type: "string", short: "s", value: "NAME", help: "the named session to open it in (made if new)" },
    cwd: { ...cwd, help: "start there (the session's cwd does not move)" },
    env,
    image,
    sandbox,
  },
};

export const run: CommandSpec = {
  name: "run",
  summary:
    "Plays a plan of tool calls in one session and prints one JSON line per call. With --check, a result\n" +
    "that does not match its step's `expect` makes the exit code 1. Plan errors exit 2.",
  positionals: "PLAN.json",
  // run says "missing PLAN.json" itself: --example NAME stands for it.
  minPositionals: 0,
  maxPositionals: 1,
  options: {
    example: {
      type: "string",
      value: "NAME",
      help: "play a plan the package ships (smoke, matrix) instead of PLAN.json",
    },
    backend: { ...backend, help: "overrides the plan's environment.backend" },
    config: { ...config, help: "backend options, over the plan's environment" },
    check: { type: "boolean", help: "compare each result with its step's expect" },
    "max-output-bytes": maxOutput,
    "max-output": maxOutputAlias,
  },
};

export const serve: CommandSpec = {
  name: "serve",
  summary: "Hosts shell sessions over HTTP for the `gateway` backend (API: docs/gateway.md).",
  positionals: "",
  minPositionals: 0,
  maxPositionals: 0,
  options: {
    host,
    port: port(String(DEFAULT_GATEWAY_PORT)),
    "token-file": {
      ...tokenFile,
      help: "file holding the bearer token, mode 600 (default: $SHELLWRIGHT_GATEWAY_TOKEN)",
    },
    "insecure-no-auth": insecure,
    backend: { ...backend, help: "backend the sessions run on (default local)" },
    config,
    "backend-config": { type: "string", value: "FILE", aliasOf: "config", deprecated: true, help: "" },
    "allow-root": {
      type: "string",
      multiple: true,
      value: "DIR",
      help: "a cwd requests may use must lie under DIR; repeatable (default: --cwd)",
    },
    cwd: { ...cwd, help: "cwd of a new session (default: first --allow-root, else here)" },
    "max-sessions": { type: "string", value: "N", help: "(default 64)" },
    "max-concurrent": { type: "string", value: "N", help: "executions at once across sessions (default 32)" },
    "max-long-lived-per-session": {
      type: "string",
      value: "N",
      help: "background processes' and PTYs' followers one session may run (default 128; not in --max-concurrent)",
    },
    "max-long-lived": { type: "string", value: "N", help: "the same across sessions (default 512)" },
    "idle-timeout-ms": { type: "string", value: "MS", help: "close a session idle this long (default 1800000)" },
    "max-body-bytes": { type: "string", value: "BYTES", help: "request body limit (default 8388608)" },
    "pool-size": poolSize,
    sandbox,
    api: {
      type: "string",
      value: "APIS",
      help: "APIs served, comma-separated: shellwright (default; docs/gateway.md), e2b (docs/e2b.md), hermes (hermes' tool-gateway sandboxes)",
    },
  },
  details: "Prints the gateway's URL on stdout once it listens; runs until SIGINT or SIGTERM.",
};

export const mcp: CommandSpec = {
  name: "mcp",
  summary:
    "Serves the Shellwright tools over the Model Context Protocol. On stdio by default (only the protocol\n" +
    "goes to stdout); with --http, on 127.0.0.1 with a bearer token from $SHELLWRIGHT_MCP_TOKEN or --token-file.",
  positionals: "",
  minPositionals: 0,
  maxPositionals: 0,
  options: {
    backend,
    config,
    cwd: { ...cwd, help: "the session's first working directory" },
    "max-output-bytes": { ...maxOutput, help: "terminal output shown to the model, head and tail (default 50000)" },
    "max-output": maxOutputAlias,
    "no-redact": { type: "boolean", help: "show secrets in tool results unmasked (docs/secrets.md)" },
    "max-message-bytes": {
      type: "string",
      value: "BYTES",
      help: "largest message a client may send; a larger one gets an error (default 10485760 on stdio, 4194304 with --http)",
    },
    tools: {
      type: "string",
      value: "SETS",
      help: "tool sets served, comma-separated: shellwright (default), openai, anthropic, codex (docs/native-tools.md), checkpoint (docs/branching.md)",
    },
    http: { type: "boolean", help: "the streamable HTTP transport instead of stdio" },
    host: { ...host, help: "with --http: address to bind (default 127.0.0.1)" },
    port: { ...port("8808"), help: "with --http: port, 0 for any free one (default 8808)" },
    "token-file": { ...tokenFile, help: "with --http: file holding the bearer token, mode 600" },
    "insecure-no-auth": { ...insecure, help: "with --http: serve without a token (loopback only)" },
    "pool-size": { ...poolSize, help: "with --http: " + poolSize.help },
    "unified-exec": {
      type: "boolean",
      help: "offer Codex's exec_command and write_stdin too (docs/interactive.md)",
    },
    sandbox,
  },
};

export const sessions: CommandSpec = {
  name: "sessions",
  summary:
    "Lists named sessions, the Docker containers Shellwright labelled, and what processes that are gone left behind. Env values are never shown.",
  positionals: "",
  minPositionals: 0,
  maxPositionals: 0,
  options: {
    json: { type: "boolean", help: "one JSON object: {sessions, containers, leftovers}" },
    prune: {
      type: "boolean",
      help: "remove the leftovers first: state dirs, ssh masters, unfinished named sessions, containers of dead owners",
    },
  },
};

export const close: CommandSpec = {
  name: "close",
  summary: "Ends a named session (or a leftover Shellwright container) and removes its state.",
  positionals: "NAME",
  minPositionals: 1,
  maxPositionals: 1,
  options: {},
};

export const help: CommandSpec = {
  name: "help",
  summary: "Shows the help of a command, or the list of commands.",
  positionals: "[COMMAND]",
  minPositionals: 0,
  maxPositionals: 1,
  options: {},
};

export const SUBCOMMANDS: Record<string, Subcommand> = {
  exec: { spec: exec, load: () => import("./exec.js") },
  shell: { spec: shell, load: () => import("./exec.js").then((m) => ({ run: m.shell })) },
  run: { spec: run, load: () => import("./run.js") },
  serve: { spec: serve, load: () => import("./serve.js") },
  mcp: { spec: mcp, load: () => import("./mcp.js") },
  sessions: { spec: sessions, load: () => import("./sessions.js").then((m) => ({ run: m.list })) },
  close: { spec: close, load: () => import("./sessions.js").then((m) => ({ run: m.close })) },
};
