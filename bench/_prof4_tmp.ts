import { createAgent } from "../lib/agent/mod.ts";
const root = Deno.args[0]!;
const agent = await createAgent({ root, env: {} });
const t = performance.now();
const session = await agent.resumeSession({ target: "session-2026-01-02-03-04-05-be4c4b0e", warn: () => {} });
console.log("resume", performance.now() - t);
await session.dispose();
