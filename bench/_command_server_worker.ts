// Worker for bench/command_turns.ts: the scripted model server in its own isolate. Every
// request but the last is answered with one exec_command call (`echo turn <i>`); the last with
// text. Protocol: post {turns}; the worker answers {url}; post "stop"; it answers {times}
// (per request: arrivedAt, respondedAt) and closes.
import { startModelServer, turn } from "../tests/support/model_server.ts";

/** The worker global, typed for the calls used here. */
const worker = self as unknown as {
  onmessage: ((e: MessageEvent) => void) | null;
  postMessage(data: unknown): void;
  close(): void;
};

let turns = 0;
const server = await startModelServer({
  maxRequests: 100_000,
  handler: (_req, i) => {
    if (i >= turns - 1) return turn.text("done");
    return turn.toolCall("exec_command", { description: "echo", cmd: `echo turn ${i}` });
  },
});
worker.onmessage = async (e: MessageEvent) => {
  if (e.data === "stop") {
    const times = server.requests.map((r) => ({
      arrivedAt: r.arrivedAt,
      respondedAt: r.respondedAt,
    }));
    await server.close();
    worker.postMessage({ times });
    worker.close();
    return;
  }
  turns = e.data.turns;
  worker.postMessage({ url: server.baseUrl("openai-chat") });
};
