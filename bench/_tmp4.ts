import { scanTrace } from "../lib/inspect/_scan.ts";
import { walkTraceFiles } from "../lib/inspect/targets.ts";
const files = await walkTraceFiles("/tmp/insp/corpus");
let size = 0; for (const f of files) size += Deno.statSync(f).size;
for (let k=0;k<3;k++){
let t = performance.now(); let c = 0; let slow = 0;
for (const f of files) await scanTrace(f, (r) => { c++; if (r.payload && r.kind==="model_msg") slow++; });
console.log("scan", c, slow, (size/1e6/((performance.now()-t)/1000)).toFixed(0), "MB/s");
}
