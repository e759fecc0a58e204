// Worker for bench/command_turns.ts (c): the scripted model servers of a chain of 200-turn
// sessions, one server per session, in their own isolate. Every request but a session's last is
// answered with one exec_command call (`echo turn <i>`); the last with text.
//
// Sessions overlap in pairs so that the late turns of one and the early turns of the next run
// in the same seconds: when session k's request `startNextAt` arrives, it is held and the worker
// asks for session k+1 to be started. From then on the two take turns, and only one of them
// works at any moment: a request that arrives releases the other session's held request and is
// itself held, until the other session's next request arrives. Session k's last request releases
// k+1 and is answered at once; k+1 then runs on alone. A gap (response sent → next request of
// the same session) is therefore always measured while the other session waits for its answer.
//
// Protocol: post {turns, sessions, startNextAt}; the worker answers {urls}; it posts {start: k}
// when session k is due; post "stop"; it answers {times} (per session, per request: arrivedAt,
// respondedAt) and closes.
import { type ModelServer, startModelServer, turn } from "../tests/support/model_server.ts";

/** The worker global, typed for the calls used here. */
const worker = self as unknown as {
  onmessage: ((e: MessageEvent) => void) | null;
  postMessage(data: unknown): void;
  close(): void;
};

interface Held {
  session: number;
  release: () => void;
}

let held: Held | undefined;

/** Hold session `s` until the other session's next request releases it. */
function hold(s: number): Promise<void> {
  return new Promise((release) => (held = { session: s, release }));
}

/** Release the other session's held request, if there is one; whether there was. */
function releaseOther(s: number): boolean {
  if (!held || held.session === s) return false;
  const h = held;
  held = undefined;
  h.release();
  return true;
}

function serverFor(
  s: number,
  opts: { turns: number; sessions: number; startNextAt: number },
): Promise<ModelServer> {
  return startModelServer({
    maxRequests: opts.turns,
    handler: async (_req, i) => {
      const last = i >= opts.turns - 1;
      if (i === opts.startNextAt && s + 1 < opts.sessions) {
        const wait = hold(s);
        worker.postMessage({ start: s + 1 });
        await wait;
      } else if (releaseOther(s) && !last) {
        await hold(s);
      }
      if (last) return turn.text("done");
      return turn.toolCall("exec_command", { description: "echo", cmd: `echo turn ${i}` });
    },
  });
}

let servers: ModelServer[] = [];
worker.onmessage = async (e: MessageEvent) => {
  if (e.data === "stop") {
    const times = servers.map((server) =>
      server.requests.map((r) => ({ arrivedAt: r.arrivedAt, respondedAt: r.respondedAt }))
    );
    await Promise.all(servers.map((s) => s.close()));
    worker.postMessage({ times });
    worker.close();
    return;
  }
  const opts = e.data as { turns: number; sessions: number; startNextAt: number };
  servers = await Promise.all(
    Array.from({ length: opts.sessions }, (_, s) => serverFor(s, opts)),
  );
  worker.postMessage({ urls: servers.map((s) => s.baseUrl("openai-chat")) });
};
