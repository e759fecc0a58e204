/**
 * A scripted Anthropic Messages request and the body of a response whose
 * thinking blocks carry given signatures: for the tests that feed
 * `streamModel` a body of their own through `fetch` (opaque payloads of
 * megabytes, read as they arrive).
 *
 * @module
 */
import type { WireRequest } from "../../lib/models/wire.ts";
import { ENCODERS, item, turn } from "./model_server.ts";

/** A request to a scripted Anthropic Messages model (never sent: the test's `fetch` answers). */
export function signedRequest(): WireRequest {
  return {
    endpoint: {
      provider: "scripted",
      model_id: "m",
      protocol: "anthropic-messages",
      base_url: "http://127.0.0.1:9/v1",
      api_key: "sk-test",
    },
    system_prompt: "",
    tools: [],
    history: [{ type: "text", role: "user", text: "hi", stop_reason: "completed" }],
  };
}

/** The server-sent events of a response: one thinking block ("t") per signature, then "done". */
export function signedBody(signatures: readonly string[]): string {
  const encoder = ENCODERS.find((e) => e.protocol === "anthropic-messages")!;
  return encoder.encodeTurn(
    turn.of(
      ...signatures.map((signature) => item.thinking("t", { signature })),
      item.text("done"),
    ),
    "m",
  ).join("");
}
