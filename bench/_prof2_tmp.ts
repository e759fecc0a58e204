import { createAgent } from "../lib/agent/mod.ts";
import { addModel } from "../lib/state/mod.ts";
import { join } from "node:path";
const root = Deno.args[0]!;
const hwm = () => Number(/VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync("/proc/self/status"))![1]) / 1024;
const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync("/proc/self/status"))![1]) / 1024;
let t = performance.now();
const lap = (what: string) => { const n = performance.now(); console.log(what, (n - t).toFixed(0), "ms", "rss", rss().toFixed(0), "hwm", hwm().toFixed(0)); t = n; };
let got = 0;
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  for await (const c of req.body ?? []) got += c.length;
  lap("server got " + got);
  return new Response("data: [DONE]\n\n", { headers: { "content-type": "text/event-stream" } });
});
await addModel(join(root, "default_project", ".project_config.toml"), { provider: "custom", model_id: "m", base_url: `http://127.0.0.1:${server.addr.port}/v1`, client_type: "openai-chat" }, { setDefault: true });
lap("start");
const agent = await createAgent({ root, env: {} });
lap("agent");
const session = await agent.resumeSession({ target: "session-2026-01-02-03-04-05-be4c4b0e", warn: () => {} });
lap("resumed");
const origFetch = globalThis.fetch;
globalThis.fetch = (async (u: any, init: any) => { lap("fetch called, body " + typeof init.body + " " + (init.body?.length)); return await origFetch(u, init); }) as typeof fetch;
for await (const _ of session.run("Go on.", { approve: "deny-all" })) {}
lap("run done");
await session.dispose();
await server.shutdown();
