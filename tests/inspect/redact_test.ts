import assert from "node:assert/strict";
import {
  redactConversation,
  redactDeep,
  redactionMarker,
  redactSecrets,
} from "../../lib/inspect/redact.ts";
import { type Conversation, type ConvItem, toolPreview } from "../../lib/inspect/conversation.ts";
import { PLANTED } from "./_secrets.ts";

Deno.test("redaction replaces each kind of secret with a visible [redacted:<kind>] marker", () => {
  for (const { kind, text, secret } of PLANTED) {
    const out = redactSecrets(text);
    assert.ok(!out.includes(secret), `${kind}: ${out}`);
    assert.ok(out.includes(redactionMarker(kind)), `${kind}: ${out}`);
  }
});

Deno.test("redaction keeps the non-secret part of bearer headers and URLs", () => {
  assert.equal(
    redactSecrets("Authorization: Bearer abcdefghijklmnop1234"),
    "Authorization: Bearer [redacted:bearer_token]",
  );
  assert.equal(
    redactSecrets("https://alice:pw12345@example.com/path"),
    "https://alice:[redacted:url_password]@example.com/path",
  );
});

Deno.test("redaction leaves ordinary text alone", () => {
  const benign = [
    "task-list for the week; ask-questions-first; sk-learn is a library",
    "https://example.com/a:b@c and mailto:someone@example.com",
    "AKIA is a prefix; AIza alone; xoxo hugs; the bearer of bad news",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
  ];
  for (const text of benign) assert.equal(redactSecrets(text), text);
});

Deno.test("redaction keeps a JSON arguments string valid and leaves image data alone", () => {
  const args = JSON.stringify({
    content: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n",
    token: "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
  });
  const out = redactSecrets(args);
  assert.deepEqual(JSON.parse(out), {
    content: "[redacted:private_key]",
    token: "[redacted:github_token]",
  });
  const image = "data:image/png;base64,iVBORw0KGgoAKIAQWERTYUIOPASDFGH0000";
  const deep = redactDeep({ a: [PLANTED[0]!.text], image });
  assert.equal(deep.image, image);
  assert.ok(deep.a[0]!.includes("[redacted:anthropic_key]"));
});

Deno.test("redactConversation rebuilds cut tool-call previews from redacted arguments, in subagents too", () => {
  const key = "sk-proj-Zx9QwErTyUiOpAsDfGhJkL0123";
  const args = JSON.stringify({ cmd: `${"x".repeat(70)} OPENAI_API_KEY=${key}` });
  const call: ConvItem = {
    time: "2026-01-01T00:00:00Z",
    request: 1,
    kind: "tool_call",
    id: "c1",
    n: 1,
    name: "exec_command",
    arguments: args,
    preview: toolPreview("exec_command", args),
    stop_reason: "completed",
  };
  assert.ok(call.kind === "tool_call" && call.preview.includes("sk-proj"), "the cut preview leaks");
  const child = { items: [{ ...call }], subagents: [] } as unknown as Conversation;
  const conv = { items: [call], subagents: [child] } as unknown as Conversation;
  const out = redactConversation(conv);
  for (const c of [out, out.subagents![0]!]) {
    const it = c.items[0]!;
    assert.ok(it.kind === "tool_call");
    assert.ok(!it.preview.includes("sk-pro"), it.preview);
    assert.equal(it.preview, toolPreview("exec_command", redactSecrets(args)));
  }
});
