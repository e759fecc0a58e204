import { ATTEMPTS } from "/work/main/tests/sandbox/redteam/_attempts.ts";
import { createWorld, runSession } from "/work/main/tests/sandbox/redteam/_world.ts";
const batch = Deno.args[0] ?? "files";
const live = ATTEMPTS.filter((a) => a.batch === batch && !a.gap);
const w = await createWorld();
try {
  const o = await runSession(w, (w) => live.map((a, i) => a.steps(w).map((s, k) => ({ ...s, id: `rt_${i}_${k}` }))));
  console.log("code", o.code, "requests", o.requests, o.scripted);
  live.forEach((a, i) => a.steps(w).forEach((_, k) => console.log(`--- ${a.id} [${k}]\n${(o.outputs.get(`rt_${i}_${k}`) ?? "MISSING").slice(0, 300)}`)));
  console.log(o.stderr.slice(-500));
} finally { await w.close(); }
