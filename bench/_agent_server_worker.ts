// Worker for bench/agent_*.ts: the scripted model server in its own isolate, so its retained
// request bodies do not load the measured process's heap. Protocol: post {turns}; the worker
// answers {url}; post "stop"; it answers {arrivals} (performance.timeOrigin + now, ms) and closes.
import { startModelServer, turn } from "../tests/support/model_server.ts";

/** The worker global, typed for the two calls used here. */
const worker = self as unknown as {
  onmessage: ((e: MessageEvent) => void) | null;
  postMessage(data: unknown): void;
  close(): void;
};

const arrivals: number[] = [];
let turns = 0;
const server = await startModelServer({
  maxRequests: 100_000,
  handler: (_req, i) => {
    arrivals.push(performance.timeOrigin + performance.now());
    if (i >= turns - 1) return turn.text("done");
    return turn.toolCall("read_file", { file_path: "f.txt", i });
  },
});
worker.onmessage = async (e: MessageEvent) => {
  if (e.data === "stop") {
    await server.close();
    worker.postMessage({ arrivals });
    worker.close();
    return;
  }
  turns = e.data.turns;
  worker.postMessage({ url: server.baseUrl("openai-chat") });
};
