/**
 * Identifiers: project and agent ids, session ids, temporary workspace ids.
 *
 * @module
 */
import { validated } from "./_validated.ts";

/** The project used when none is named. */
export const DEFAULT_PROJECT_ID = "default_project";

/** The agent used when none is named (the only built-in agent). */
export const DEFAULT_AGENT_ID = "default_agent";

/** Allowed shape of project ids, agent ids and skill names. */
export const NAME_ID_PATTERN: RegExp = /^[A-Za-z0-9_-]+$/;

/** Shape of a session id: `session-YYYY-MM-DD-HH-mm-ss-<8hex>`. */
export const SESSION_ID_PATTERN: RegExp =
  /^session-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}-[0-9a-f]{8}$/;

/** Shape of a temporary workspace directory name: `tmp-<8hex>`. */
export const TEMP_WORKSPACE_ID_PATTERN: RegExp = /^tmp-[0-9a-f]{8}$/;

/** What an id names, used in error messages. */
export type IdKind = "project id" | "agent id" | "skill name";

/**
 * Check `id` against {@linkcode NAME_ID_PATTERN} before any path is built
 * from it; throw a usage error naming `kind` otherwise. Returns `id`.
 */
export function validateId(kind: IdKind, id: string): string {
  const ok = typeof id === "string" && NAME_ID_PATTERN.test(id);
  return validated(ok, id, kind, 'only letters, digits, "_" and "-" are allowed');
}

/** Validate a project id (see {@linkcode validateId}). */
export function validateProjectId(id: string): string {
  return validateId("project id", id);
}

/** Validate an agent id (see {@linkcode validateId}). */
export function validateAgentId(id: string): string {
  return validateId("agent id", id);
}

/** True when `id` has the shape of a session id. */
export function isSessionId(id: string): boolean {
  return SESSION_ID_PATTERN.test(id);
}

/** Throw a usage error unless `id` is a well-formed session id. Returns `id`. */
export function validateSessionId(id: string): string {
  const rule = "expected session-YYYY-MM-DD-HH-mm-ss-<8 hex digits>";
  return validated(isSessionId(id), id, "session id", rule);
}

/** Eight lowercase hex digits: the first 8 of a random UUID without dashes. */
export function randomHex8(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 8);
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

/**
 * A new session id stamped with `now` in local time, e.g.
 * `session-2026-07-18-11-10-22-3f8a1c2d`. Lexical order is chronological.
 */
export function newSessionId(now: Date = new Date(), hex: string = randomHex8()): string {
  const date = `${pad(now.getFullYear(), 4)}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
  const time = `${pad(now.getHours())}-${pad(now.getMinutes())}-${pad(now.getSeconds())}`;
  return `session-${date}-${time}-${hex}`;
}

/** A new temporary workspace directory name, `tmp-<8hex>`. */
export function newTempWorkspaceId(): string {
  return `tmp-${randomHex8()}`;
}
