import assert from "node:assert/strict";
import { type RunOutcome, type Session, trackOutcome } from "../../lib/agent/mod.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { type ScriptedTurn, turn } from "../support/model_server.ts";
import { withAgentSession } from "./_support.ts";

const withSession = (
  turns: ScriptedTurn[],
  opts: { maxTurns?: number },
  body: (s: Session) => Promise<void>,
): Promise<void> => withAgentSession({ turns }, body, opts);

/** Every message of the run, and what it returned. */
async function drain(
  run: AsyncGenerator<OmniMessage, RunOutcome>,
): Promise<{ stream: OmniMessage[]; outcome: RunOutcome }> {
  const stream: OmniMessage[] = [];
  for (;;) {
    const step = await run.next();
    if (step.done) return { stream, outcome: step.value };
    stream.push(step.value);
  }
}

Deno.test("a run that ends with an answer returns a completed outcome", async () => {
  await withSession([turn.text("Hello.")], {}, async (session) => {
    const { outcome } = await drain(session.run("Hi.", { approve: "allow-all" }));
    assert.deepEqual(outcome, { kind: "completed" });
  });
});

Deno.test("a run stopped by max_turns returns max_turns with the limit and the notice, not an abort", async () => {
  await withSession(
    [turn.toolCall("read_file", { file_path: "x.txt" }), turn.text("never")],
    { maxTurns: 1 },
    async (session) => {
      const { stream, outcome } = await drain(session.run("Read x.", { approve: "allow-all" }));
      assert.deepEqual(outcome, {
        kind: "max_turns",
        maxTurns: 1,
        reason: "[reached max turns (1); stopping]",
      });
      assert.equal((stream.at(-1)!.payload as { text?: string }).text, outcome.reason);
    },
  );
});

Deno.test("a run whose signal aborted returns aborted with the abort event's reason", async () => {
  await withSession([turn.text("never")], {}, async (session) => {
    const ctl = new AbortController();
    ctl.abort();
    const { stream, outcome } = await drain(
      session.run("Hi.", { signal: ctl.signal, approve: "allow-all" }),
    );
    assert.deepEqual(outcome, { kind: "aborted", reason: "aborted by user" });
    assert.deepEqual(stream.at(-1)!.payload, { type: "abort", reason: "aborted by user" });
  });
});

Deno.test("a request error that is not retried returns failed with the abort event's reason", async () => {
  await withSession([turn.error(401)], {}, async (session) => {
    const { stream, outcome } = await drain(session.run("Hi.", { approve: "allow-all" }));
    assert.equal(outcome.kind, "failed");
    assert.match((outcome as { reason: string }).reason, /^llm request error: HTTP 401/);
    assert.equal(
      (stream.at(-1)!.payload as { reason?: string }).reason,
      (outcome as {
        reason: string;
      }).reason,
    );
  });
});

Deno.test("exhausted retries return failed with the exhaustion reason", async () => {
  const six = Array.from({ length: 6 }, () => turn.error(503));
  await withSession(six, {}, async (session) => {
    const { outcome } = await drain(session.run("Hi.", { approve: "allow-all" }));
    assert.equal(outcome.kind, "failed");
    assert.match((outcome as { reason: string }).reason, /^reconnect failed after 5 retries: /);
  });
});

Deno.test("trackOutcome keeps the outcome for a for-await loop, and none when the loop stops early", async () => {
  await withSession([turn.text("One."), turn.text("Two.")], {}, async (session) => {
    const whole = trackOutcome(session.run("Hi.", { approve: "allow-all" }));
    for await (const _ of whole) { /* drain */ }
    assert.deepEqual(whole.outcome, { kind: "completed" });
    const cut = trackOutcome(session.run("Again.", { approve: "allow-all" }));
    for await (const _ of cut) break;
    assert.equal(cut.outcome, undefined);
    assert.equal(session.running, false, "stopping the loop stopped the run");
  });
});
