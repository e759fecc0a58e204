import { collectStats } from "../lib/inspect/stats.ts";
import { createPriceBook } from "../lib/inspect/pricing.ts";
import { resolveTargets } from "../lib/inspect/targets.ts";
for (const by of ["session","day","tool"] as const) {
const t0 = performance.now();
const sessions = await resolveTargets(["/tmp/insp/corpus"]);
const t1 = performance.now();
const r = await collectStats(sessions, { prices: createPriceBook(), by });
const dt = (performance.now()-t0)/1000;
console.log(by, sessions.length, "resolve", ((t1-t0)/1000).toFixed(3), (r.bytes/1e6/dt).toFixed(0), "MB/s", r.rows.length);
if (by==="tool") console.log(JSON.stringify(r.total, null, 1).slice(0, 3000));
}
