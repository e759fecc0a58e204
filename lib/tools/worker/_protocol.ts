/**
 * The messages between a {@linkcode ToolWorker} host and the worker that
 * serves tools (`serve.ts`). Everything is structured-clone data: tool
 * definitions, JSON arguments, {@linkcode ToolEvent}s, and errors reduced to
 * `{name, message}`.
 *
 * @module
 */
import type { GitAccess } from "../../sandbox/git_guard.ts";
import type { ExecTarget } from "../../sandbox/git_config_guard.ts";
import type { ProtectedFileId } from "../../sandbox/protected_ids.ts";
import type { StartupFacts } from "../_startup_refusal.ts";
import type { ToolDefinition, ToolEvent } from "../tool.ts";

/** The part of a `ToolContext` that crosses into the worker (no signal, no registries). */
export interface WorkerToolContext {
  /** Real path of the workspace. */
  workspace: string;
  /** Real path of the session scratchpad. */
  scratchpad?: string;
  /** Directories readable, never writable, by the file tools. */
  readOnlyRoots?: string[];
  /** The running session. */
  sessionId: string;
  /** The call being executed. */
  toolCallId: string;
  /** The model response the call belongs to (its images are bounded together). */
  responseId?: string;
  /** Git access of the file tools (the session sandbox's `git`); absent: read-only. */
  git?: GitAccess;
  /** More real directories the file tools may read and write (the sandbox's `revealWritable`). */
  revealWritable?: string[];
  /** What git's configuration makes read-only, resolved by the host (the worker cannot read it all). */
  gitTargets?: ExecTarget[];
  /** Other penguin processes' run directories (`PENGUIN_RUN_DIR`), found by the host. */
  runDirs?: string[];
  /** The protected files with other names (hard links), found by the host. */
  protectedFiles?: ProtectedFileId[];
  /** What the home's startup files source or name, and where each leads, found by the host. */
  startupFacts?: StartupFacts;
}

/** An error as it crosses the thread boundary. */
export interface WireError {
  /** `Error.name` (`AbortError`, `TimeoutError`, `NotCapable`, …). */
  name: string;
  /** `Error.message`. */
  message: string;
}

/** Host → worker. */
export type HostMessage =
  /** Start call `id`: instantiate `tool` from `definition` and run it. */
  | {
    type: "run";
    id: number;
    tool: string;
    definition: ToolDefinition;
    args: Record<string, unknown>;
    ctx: WorkerToolContext;
  }
  /** Abort call `id` with `reason`. */
  | { type: "abort"; id: number; reason: WireError }
  /** Answer to call `id`'s `hold`: `ok` once the share is held, false when the call aborted first. */
  | { type: "held"; id: number; ok: boolean }
  /**
   * Answer to call `id`'s `claim`: whether its image fits what its response may return, and
   * what the process's conversations may hold together (`bound: "process"` when that refused).
   */
  | { type: "claimed"; id: number; ok: boolean; bound?: "process" };

/** Worker → host. */
export type WorkerMessage =
  /** The worker's module graph is loaded and it listens. */
  | { type: "ready" }
  /** One event of call `id`, in order. */
  | { type: "event"; id: number; event: ToolEvent }
  /** Call `id` finished normally. */
  | { type: "done"; id: number }
  /** Call `id` threw `error`. */
  | { type: "error"; id: number; error: WireError }
  /** Call `id` asks to hold `bytes` of the pool's file memory budget (`./_memory_budget.ts`). */
  | { type: "hold"; id: number; bytes: number }
  /** Call `id` claims `bytes` of image data of its response (`./_image_claims.ts`). */
  | { type: "claim"; id: number; bytes: number };

/** Reduce any thrown value to a {@linkcode WireError}. */
export function toWireError(err: unknown): WireError {
  if (err instanceof Error) return { name: err.name, message: err.message };
  if (err instanceof DOMException) return { name: err.name, message: err.message };
  return { name: "Error", message: String(err) };
}

/** Rebuild a thrown value from a {@linkcode WireError} (AbortError and TimeoutError as DOMExceptions). */
export function fromWireError(e: WireError): Error {
  if (e.name === "AbortError" || e.name === "TimeoutError") {
    return new DOMException(e.message, e.name);
  }
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}
