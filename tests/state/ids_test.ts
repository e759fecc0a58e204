import assert from "node:assert/strict";
import { PenguinError } from "../../lib/protocol/errors.ts";
import {
  DEFAULT_AGENT_ID,
  DEFAULT_PROJECT_ID,
  isSessionId,
  newSessionId,
  newTempWorkspaceId,
  SESSION_ID_PATTERN,
  TEMP_WORKSPACE_ID_PATTERN,
  validateAgentId,
  validateProjectId,
  validateSessionId,
} from "../../lib/state/ids.ts";

Deno.test("project and agent ids accept letters, digits, _ and - only", () => {
  for (const ok of ["default_project", "a", "A-1_b", DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID]) {
    assert.equal(validateProjectId(ok), ok);
    assert.equal(validateAgentId(ok), ok);
  }
  for (const bad of ["", "a/b", "..", "a b", "é", "a.b", "x\n"]) {
    assert.throws(() => validateProjectId(bad), (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.equal(err.kind, "usage");
      assert.equal(
        err.message,
        `Invalid project id ${JSON.stringify(bad)}: only letters, digits, "_" and "-" are allowed`,
      );
      return true;
    });
    assert.throws(() => validateAgentId(bad), /^PenguinError: Invalid agent id/);
  }
});

Deno.test("a new session id is stamped with local time and 8 hex digits", () => {
  const at = new Date(2026, 6, 8, 9, 5, 3); // local time, month is 0-based
  const id = newSessionId(at, "3f8a1c2d");
  assert.equal(id, "session-2026-07-08-09-05-03-3f8a1c2d");
  const fresh = newSessionId();
  assert.match(fresh, SESSION_ID_PATTERN);
  assert.ok(isSessionId(fresh));
  assert.notEqual(newSessionId(at), newSessionId(at));
});

Deno.test("session ids sort chronologically as strings", () => {
  const a = newSessionId(new Date(2026, 0, 2, 23, 59, 59), "ffffffff");
  const b = newSessionId(new Date(2026, 0, 10, 0, 0, 0), "00000000");
  assert.ok(a < b);
});

Deno.test("session id validation rejects other shapes", () => {
  for (
    const bad of [
      "session-2026-7-8-9-5-3-3f8a1c2d",
      "session-2026-07-08-09-05-03-3F8A1C2D",
      "../x",
      "",
    ]
  ) {
    assert.equal(isSessionId(bad), false);
    assert.throws(() => validateSessionId(bad), PenguinError);
  }
});

Deno.test("temp workspace ids are tmp-<8hex> and differ", () => {
  const a = newTempWorkspaceId();
  assert.match(a, TEMP_WORKSPACE_ID_PATTERN);
  assert.notEqual(a, newTempWorkspaceId());
});
