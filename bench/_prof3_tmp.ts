import { createToolset, resolveToolDefinitions } from "../lib/agent/toolset.ts";
const ts = createToolset(resolveToolDefinitions(undefined), true);
const s = JSON.stringify(ts.specs);
const non = [...s].filter((c) => c.charCodeAt(0) > 127);
console.log(s.length, non.length, [...new Set(non)].join(""));
