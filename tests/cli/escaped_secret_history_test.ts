// A value holding `"` and `\` that the model wrote before the user put it in the vault (red team
// final9 F32/F33): its escapes break every 8-character run of the JSON text of a tool call's
// arguments. Resume masks the arguments by their decoded strings, so the resumed request holds no
// piece of it; `sessions import` of such a trace stores and shows none either.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { item, turn } from "../support/model_server.ts";
import { inRoot, runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { traceFilesUnder } from "../support/trace_records.ts";
import { assertNoPieceOf, setVault } from "../support/secrets.ts";

const W = 'Wl8K"q3Zt\\6Rn1"Xv4P\\b7Mc"2Hd5';
/** What the model writes: a piece of W (W whole was masked by its escaped form already). */
const PIECE = W.slice(2, 24);

/** Every string of `value`, and of every string that is JSON text, decoded. */
function stringsOf(value: unknown): string[] {
  if (typeof value === "string") {
    try {
      return [value, ...stringsOf(JSON.parse(value))];
    } catch {
      return [value];
    }
  }
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => [k, ...stringsOf(v)]);
  }
  return [];
}

/** Asserts no decoded string of `value` holds an 8-character piece of W. */
function assertNoPieceDecoded(value: unknown, where: string): void {
  assertNoPieceOf(stringsOf(value).join("\n"), [W], where);
}

Deno.test("resume and import mask a later vault value with quotes inside tool-call arguments", async () => {
  await withModelRoot({
    handler: (req) => {
      if (JSON.stringify(req.body).includes('"c1"')) return turn.text("ok");
      return turn.of(
        item.toolCall("write_file", { file_path: "notes.txt", content: `k=${PIECE}` }, {
          id: "c1",
        }),
      );
    },
    maxRequests: 10,
  }, async (sb, server) => {
    const cli = async (args: string[]) => {
      const r = await runCli(args, { env: { NO_COLOR: "1", PAGER: "cat" } });
      assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stderr}`);
      return r;
    };
    const first = await cli(inRoot(sb, "run", "--approve", "allow-all", "-m", "write it"));
    const sid = /(session-[0-9-]+[0-9a-f]{8})/.exec(first.stderr + first.stdout)?.[1];
    assert.ok(sid, first.stderr);
    assert.equal(await Deno.readTextFile(join(sb.workspace, "notes.txt")), `k=${PIECE}`);
    const agent = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID);
    const [file] = await traceFilesUnder(join(agent, "traces"));
    const old = join(sb.workspace, "..", "old-trace.jsonl");
    await Deno.copyFile(file!, old);

    // F32: the resumed request replays the write_file call with W masked in its decoded arguments.
    await setVault(sb.root, "LATER", W);
    const before = server.requests.length;
    await cli(inRoot(sb, "run", "--resume", sid, "-m", "again"));
    const resumed = server.requests.slice(before);
    assert.ok(resumed.length > 0, "the resume sent a request");
    for (const r of resumed) assertNoPieceDecoded(r.body, "the resumed request");
    assert.match(JSON.stringify(resumed[0]!.body), /\[redacted:vault:LATER\]/);

    // F33: an import of the old trace stores the arguments masked; trace show shows none.
    const imp = await cli(["--root", sb.root, "sessions", "import", old, "--again"]);
    const isid = [...(imp.stdout + imp.stderr).matchAll(/session-[0-9-]+[0-9a-f]{8}/g)].at(-1)?.[0];
    assert.ok(isid, imp.stdout + imp.stderr);
    const files = await traceFilesUnder(join(agent, "traces"));
    const stored = await Promise.all(
      files.filter((f) => f.includes(isid)).map((f) => Deno.readTextFile(f)),
    );
    assert.ok(stored.length > 0, `the imported trace of ${isid} among ${files.join(", ")}`);
    const records = stored.join("").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
    assertNoPieceDecoded(records, "the imported trace");
    assert.match(JSON.stringify(records), /\[redacted:vault:LATER\]/);
    for (const args of [["trace", "show", isid], ["trace", "show", isid, "--json"]]) {
      const r = await cli(["--root", sb.root, ...args]);
      assertNoPieceOf(r.stdout, [W, JSON.stringify(W).slice(1, -1)], args.join(" "));
    }
  }, { visible: true });
});
