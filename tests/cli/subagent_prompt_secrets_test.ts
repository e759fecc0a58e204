// A secret the model learned and writes into the prompt of a subagent (issue 26 item 5, red team
// A19): the subagent tools run with the model's real arguments, so the child session used to start
// from the raw value, recording it in its trace, showing it in `sessions list --all`, `sessions
// show` and `trace show`, and sending it to the provider. A real `penguin run` against the scripted
// model: the parent reads a vault value reversed (an encoding, not masked), starts a background
// subagent with the value in its prompt and description, waits for it, then gives it a follow-up
// holding the value. No 8-character piece reaches any trace file, any listing or any request.
import assert from "node:assert/strict";
import { join } from "node:path";
import { type RecordedRequest, turn } from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { chatMessages, textOf, toolResults, turnOf, whose } from "../agent/_subagent_support.ts";
import { assertNoPieceOf } from "../support/secrets.ts";

const V = "Qm7Zr2Kx9Wc4Lp8Tn3Hv6Bd1Fs5Gj0Ya";
const MARK = "[redacted:vault:ATK_V]";

/** Fail when any 8-character piece of the secret occurs in `text`. */
function assertNoPiece(text: string, where: string): void {
  assertNoPieceOf(text, [V], where);
}

/** Every file under `dir` whose name ends with `.jsonl`, by path. */
async function traceFiles(
  dir: string,
  out = new Map<string, string>(),
): Promise<Map<string, string>> {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) await traceFiles(p, out);
    else if (e.isFile && e.name.endsWith(".jsonl")) out.set(p, await Deno.readTextFile(p));
  }
  return out;
}

async function ok(args: string[]): Promise<string> {
  const r = await runCli(args, { env: { PAGER: "cat", NO_COLOR: "1" } });
  assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stderr}`);
  return r.stdout + r.stderr;
}

/** The subagent id named by the latest tool result of a parent request. */
function idFrom(req: RecordedRequest): string {
  for (const r of [...toolResults(req)].reverse()) {
    const m = /subagent_id (subagent-[0-9a-f]{8})/.exec(r.text);
    if (m) return m[1]!;
  }
  throw new Error("no subagent id in the tool results");
}

Deno.test("run: a learned secret in run_subagent's and input_subagent's prompts reaches the child masked", async () => {
  let id = "";
  const call = (name: string, args: Record<string, unknown>) => turn.toolCall(name, args);
  await withModelRoot({
    maxRequests: 20,
    handler: (req) => {
      if (whose(req) === "kid") return turn.text(turnOf(req) === 0 ? "child one" : "child two");
      switch (turnOf(req)) {
        case 0:
          return call("exec_command", { description: "learn", cmd: "printenv ATK_V | rev" });
        case 1:
          return call("run_subagent", {
            description: `sub ${V}`,
            prompt: `[[kid]] remember ${V}`,
            run_in_background: true,
          });
        case 2:
          id = idFrom(req);
          return call("input_subagent", {
            description: "wait",
            subagent_id: id,
            yield_time_ms: 20_000,
          });
        case 3:
          return call("input_subagent", {
            description: `again ${V}`,
            subagent_id: id,
            prompt: `again ${V}`,
            yield_time_ms: 20_000,
          });
        default:
          return turn.text("done");
      }
    },
  }, async (sb, server) => {
    await ok(["--root", sb.root, "config", "vault", "set", "--key", "ATK_V", "--value", V]);
    const r = await runCli(
      [...inRoot(sb, "run"), "--approve", "allow-all", "-m", "[[parent]] go"],
      { env: { NO_COLOR: "1" } },
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const bodies = JSON.stringify(server.requests.map((q) => q.body));
    assert.ok(bodies.includes([...V].reverse().join("")), "the model learned the value");
    // The child ran both tasks, from the masked prompts.
    const kid = server.requests.filter((q) => whose(q) === "kid");
    assert.equal(kid.length, 2, bodies);
    const asked = chatMessages(kid[1]!).filter((m) => m.role === "user").map(textOf);
    assert.deepEqual(asked, [`[[kid]] remember ${MARK}`, `again ${MARK}`]);

    assertNoPiece(r.stdout + r.stderr, "the run's output");
    assertNoPiece(bodies, "a request body");
    const files = await traceFiles(sb.root);
    assert.ok(files.size >= 2, "the parent's and the child's traces");
    for (const [path, text] of files) assertNoPiece(text, path);
    const list = await ok(["--root", sb.root, "sessions", "list", "--all", "--json"]);
    assertNoPiece(list, "sessions list --all --json");
    const sids = [...new Set(list.match(/session-[0-9A-Za-z-]+/g) ?? [])];
    assert.equal(sids.length, 2, list);
    for (const sid of sids) {
      assertNoPiece(await ok(["--root", sb.root, "sessions", "show", sid]), `sessions show ${sid}`);
      assertNoPiece(await ok(["--root", sb.root, "trace", "show", sid]), `trace show ${sid}`);
    }
  }, { visible: true });
});
