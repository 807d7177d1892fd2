/**
 * envd's process service (process.proto) on a sandbox's Shellwright session:
 * Start, Connect, List, SendInput, StreamInput, CloseStdin, SendSignal and
 * Update. The router has authenticated the sandbox and put it in the
 * context (SANDBOX_ENTRY) before any of these runs.
 */

import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { posix } from "node:path";
import { isShellwrightError } from "../../../core/errors.js";
import { HttpError } from "../../http.js";
import { Signal, type Process } from "../gen/process/process_pb.js";
import type { SessionRegistry } from "../../sessions.js";
import type { PathPolicy } from "../../paths.js";
import { SANDBOX_ENTRY, type SandboxEntry } from "../entry.js";
import { maskedEnvs } from "../masked-envs.js";
import { checkEnvs, commandLine, withEnvs } from "./command-line.js";
import { startWithExecute } from "./exec-driver.js";
import { openStdinFeed } from "./stdin-feed.js";
import { startWithSpawn } from "./spawn-driver.js";
import { processEvents } from "./event-stream.js";
import type { ProcessDriver, SandboxProcess } from "./sandbox-process.js";

type Selector = Parameters<SandboxEntry["processes"]["find"]>[0];

/** @param paths the gateway's allowed roots: a Start's cwd must lie under one */
export function processService(registry: SessionRegistry, paths: PathPolicy): Partial<ServiceImpl<typeof Process>> {
  return {
    async *start(req, ctx) {
      const entry = entryOf(ctx);
      const config = req.process;
      if (config === undefined)
        throw new ConnectError("process is required: the program to start", Code.InvalidArgument);
      const size = req.pty?.size;
      if (req.pty !== undefined) checkSize(size);
      const command = commandLine(config.cmd, config.args);
      checkEnvs(config.envs);
      const cwd = workingDir(entry, paths, config.cwd);
      const process = entry.processes.add(
        req.tag,
        {
          cmd: config.cmd,
          args: config.args,
          envs: config.envs,
          ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
        },
        size !== undefined,
      );
      // Watched before it runs, so not a byte of its output is missed.
      const events = processEvents(process, ctx);
      const first = await events.next();
      try {
        const base = { registry, sandboxId: entry.record.sandboxId, process, cwd };
        // Neither way puts a variable's value on a command line: a spawned process gets them apart, a
        // plain one on its stdin (withEnvs).
        if (size !== undefined)
          await startWithSpawn({
            ...base,
            command,
            envs: config.envs,
            session: entry.record.session,
            pty: { cols: size.cols, rows: size.rows },
          });
        else {
          // An open stdin is a FIFO fed by the session; the process itself runs through execute, whose output
          // arrives whole (a background process's log is bounded).
          const input = req.stdin === true ? await openStdinFeed(entry.record.session) : undefined;
          try {
            startWithExecute({
              ...base,
              ...withEnvs(input === undefined ? command : `${input.unlinkFirst}\n${command}`, config.envs, input?.path),
              isolated: entry.commands === "fresh",
              input,
            });
          } catch (error) {
            input?.stop();
            throw error;
          }
        }
      } catch (error) {
        entry.processes.remove(process);
        await events.return(undefined);
        throw startError(error);
      }
      // envd ends a process whose Start deadline passes (the SDK's timeoutMs, 60 s unless set).
      const deadlineMs = ctx.timeoutMs();
      if (deadlineMs !== undefined) {
        const timer = setTimeout(() => void process.driver?.signal("SIGKILL").catch(() => undefined), deadlineMs);
        timer.unref();
        process.watch((update) => update.kind === "end" && clearTimeout(timer));
      }
      if (first.value !== undefined) yield first.value;
      yield* events;
    },

    async *connect(req, ctx) {
      const process = entryOf(ctx).processes.find(selectorOf(req.process?.selector));
      yield* processEvents(process, ctx);
    },

    list(_req, ctx) {
      const entry = entryOf(ctx);
      const mask = (text: string): string => entry.record.tokenMask?.mask(text) ?? text;
      return {
        processes: entry.processes.running().map((process) => {
          const { cmd, args, envs, cwd } = process.config;
          return {
            pid: process.pid,
            ...(process.tag === undefined ? {} : { tag: mask(process.tag) }),
            // Echoed as sent, but for the gateway's token (masked-envs.ts).
            config: {
              cmd: mask(cmd),
              args: args.map(mask),
              envs: maskedEnvs(envs, entry.record.tokenMask),
              ...(cwd === undefined ? {} : { cwd: mask(cwd) }),
            },
          };
        }),
      };
    },

    async sendInput(req, ctx) {
      const process = entryOf(ctx).processes.find(selectorOf(req.process?.selector));
      await write(process, req.input?.input);
      return {};
    },

    async streamInput(requests, ctx) {
      let process: SandboxProcess | undefined;
      for await (const request of requests) {
        const event = request.event;
        if (event.case === "start") process = entryOf(ctx).processes.find(selectorOf(event.value.process?.selector));
        else if (event.case === "data") {
          if (process === undefined)
            throw new ConnectError(
              "StreamInput must begin with a start event naming the process",
              Code.InvalidArgument,
            );
          await write(process, event.value.input?.input);
        }
      }
      return {};
    },

    async closeStdin(req, ctx) {
      const process = entryOf(ctx).processes.find(selectorOf(req.process?.selector));
      if (!(await driverOf(process).closeStdin()))
        throw new ConnectError(`process ${process.pid} was not started with stdin`, Code.FailedPrecondition);
      return {};
    },

    async sendSignal(req, ctx) {
      const process = entryOf(ctx).processes.find(selectorOf(req.process?.selector));
      if (req.signal !== Signal.SIGKILL && req.signal !== Signal.SIGTERM)
        throw new ConnectError(`signal must be SIGTERM (15) or SIGKILL (9), got ${req.signal}`, Code.InvalidArgument);
      await driverOf(process).signal(req.signal === Signal.SIGKILL ? "SIGKILL" : "SIGTERM");
      return {};
    },

    async update(req, ctx) {
      const process = entryOf(ctx).processes.find(selectorOf(req.process?.selector));
      const size = req.pty?.size;
      if (size === undefined) return {};
      checkSize(size);
      if (!(await driverOf(process).resize({ cols: size.cols, rows: size.rows })))
        throw new ConnectError(`process ${process.pid} has no PTY to resize`, Code.FailedPrecondition);
      return {};
    },
  };
}

/** A refusal from the session (no PTY here, a limit reached) as a Connect error that keeps its message. */
function startError(error: unknown): unknown {
  if (error instanceof ConnectError) return error;
  if (error instanceof HttpError)
    return new ConnectError(error.message, error.status === 429 ? Code.ResourceExhausted : Code.Unavailable);
  if (isShellwrightError(error)) return new ConnectError(error.message, Code.FailedPrecondition);
  return error;
}

/** A terminal's size, the same bounds at Start and Update. */
function checkSize(size: { cols: number; rows: number } | undefined): void {
  if (size === undefined || size.cols < 1 || size.rows < 1 || size.cols > 1000 || size.rows > 1000)
    throw new ConnectError(
      `pty.size must give cols and rows from 1 to 1000, got ${size === undefined ? "none" : `${size.cols}x${size.rows}`}`,
      Code.InvalidArgument,
    );
}

function entryOf(ctx: HandlerContext): SandboxEntry {
  const entry = ctx.values.get(SANDBOX_ENTRY);
  if (entry === undefined) throw new ConnectError("no sandbox for this request", Code.Unauthenticated);
  return entry;
}

function selectorOf(selector: Selector | undefined): Selector {
  return selector ?? { case: undefined };
}

function driverOf(process: SandboxProcess): ProcessDriver {
  if (process.driver === undefined)
    throw new ConnectError(`process ${process.pid} is still starting; try again`, Code.Unavailable);
  return process.driver;
}

async function write(
  process: SandboxProcess,
  input: { case: "stdin" | "pty"; value: Uint8Array } | { case: undefined; value?: undefined } | undefined,
): Promise<void> {
  if (input?.case === undefined)
    throw new ConnectError("input is empty; give stdin or pty bytes", Code.InvalidArgument);
  if (input.case === "pty" && !process.pty)
    throw new ConnectError(`process ${process.pid} has no PTY; send stdin instead`, Code.FailedPrecondition);
  if (!(await driverOf(process).write(input.value)))
    throw new ConnectError(
      `process ${process.pid} has no open stdin (start it with stdin: true)`,
      Code.FailedPrecondition,
    );
}

/**
 * A Start's cwd: relative to the user's home, as envd resolves it. Without
 * one, a fresh sandbox starts each command in the home (E2B's default) and a
 * session sandbox where its shell now is. One that is named must lie under
 * the gateway's allowed roots (--allow-root), as a cwd does on its own API.
 */
function workingDir(entry: SandboxEntry, paths: PathPolicy, cwd: string | undefined): string | undefined {
  if (cwd === undefined || cwd === "") return entry.commands === "fresh" ? entry.record.homeDir : undefined;
  const resolved = posix.resolve(entry.record.homeDir, cwd);
  try {
    return paths.check("process.cwd", resolved);
  } catch (error) {
    if (error instanceof HttpError) throw new ConnectError(error.message, Code.PermissionDenied);
    throw error;
  }
}
