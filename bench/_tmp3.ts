import { writeCorpus } from "./inspect_gen.ts";
import { readTrace } from "../lib/trace/mod.ts";
import { expandTracePaths } from "../lib/trace/mod.ts";
const root = "/tmp/insp/corpus";
try { Deno.statSync(root) } catch { console.log(await writeCorpus(root, 300e6)); }
const files = await expandTracePaths([root]);
let size = 0; for (const f of files) size += Deno.statSync(f).size;
let t = performance.now(); let c = 0;
for (const f of files) for await (const _r of readTrace(f)) c++;
console.log("readTrace", c, (size/1e6/((performance.now()-t)/1000)).toFixed(0), "MB/s");
t = performance.now(); c = 0;
for (const f of files) { const fh = await Deno.open(f); const buf = new Uint8Array(1<<20);
while (true) { const n = await fh.read(buf); if (n===null) break; let s=0; while(true){const k=buf.subarray(0,n).indexOf(10,s); if(k<0)break; c++; s=k+1;} } fh.close(); }
console.log("count", c, (size/1e6/((performance.now()-t)/1000)).toFixed(0), "MB/s");
