// A worker entry serving deliberately "buggy" tools that skip every check and
// reach straight for the outside world. Served by the same serveTools and run
// by the same pool (same worker permissions) as the confined file tools.
import { serveTools } from "../../lib/tools/worker/serve.ts";
import type { FileToolContext, Tool, ToolDefinition, ToolEvent } from "../../lib/tools/tool.ts";

function tool(
  fn: (args: Record<string, unknown>, signal: AbortSignal, ws: string) => AsyncGenerator<ToolEvent>,
) {
  return (definition: ToolDefinition): Tool<FileToolContext> => ({
    definition,
    run: (args, ctx) => fn(args, ctx.signal, ctx.workspace),
  });
}

serveTools({
  read_any: tool(async function* (a) {
    yield { type: "delta", text: await Deno.readTextFile(String(a.path)) };
  }),
  write_any: tool(async function* (a) {
    await Deno.writeTextFile(String(a.path), String(a.content));
    yield { type: "delta", text: "written" };
  }),
  mkdir_any: tool(async function* (a) {
    await Deno.mkdir(String(a.path), { recursive: true });
    yield { type: "delta", text: "created" };
  }),
  symlink: tool(async function* (a) {
    await Deno.symlink(String(a.target), String(a.path));
    yield { type: "delta", text: "linked" };
  }),
  env: tool(async function* (a) {
    yield { type: "delta", text: Deno.env.get(String(a.name)) ?? "(unset)" };
  }),
  env_all: tool(async function* () {
    yield { type: "delta", text: JSON.stringify(Deno.env.toObject()) };
  }),
  fetch: tool(async function* (a) {
    const res = await fetch(String(a.url));
    yield { type: "delta", text: await res.text() };
  }),
  connect: tool(async function* (a) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(a.port) });
    conn.close();
    yield { type: "delta", text: "connected" };
  }),
  spawn: tool(async function* (a) {
    const out = await new Deno.Command(String(a.cmd), { args: a.args as string[] }).output();
    yield { type: "delta", text: new TextDecoder().decode(out.stdout) };
  }),
  sys: tool(async function* () {
    yield { type: "delta", text: `${Deno.hostname()} ${Deno.osRelease()}` };
  }),
  ffi: tool(async function* () {
    const lib = Deno.dlopen("libc.so.6", { getpid: { parameters: [], result: "i32" } });
    yield { type: "delta", text: String(lib.symbols.getpid()) };
  }),
  proc_self_mem: tool(async function* () {
    const f = await Deno.open("/proc/self/mem", { write: true });
    f.close();
    yield { type: "delta", text: "opened" };
  }),
  // Waits for the abort, then leaves a marker in the workspace naming the reason.
  wait_abort: tool(async function* (_a, signal, ws) {
    yield { type: "delta", text: "waiting" };
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
    await Deno.writeTextFile(`${ws}/aborted.txt`, (signal.reason as Error).name);
    yield { type: "result", status: "aborted" };
  }),
  // Ignores the abort forever.
  stubborn: tool(async function* () {
    yield { type: "delta", text: "stuck" };
    await new Promise(() => {});
  }),
  // Throws outside the call (an uncaught error in the worker).
  crash: tool(async function* () {
    yield { type: "delta", text: "about to crash" };
    setTimeout(() => {
      throw new Error("boom");
    }, 0);
    await new Promise(() => {});
  }),
  echo: tool(async function* (a) {
    yield { type: "delta", text: String(a.text) };
  }),
});
