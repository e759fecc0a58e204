// `trace export` (md and html) names tool calls by the same short numbers as
// `trace show` and the live output (`#1`, `#2`, … in trace order), never by
// the raw call ids; the HTML keeps the ids only inside tag attributes.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { sid, traceBuilder, withTempDir } from "../inspect/_support.ts";

const IDS = ["toolu_01AbCdEfGhIjKlMnOpQr", "call_zz9Yy8Xx7Ww6Vv5Uu4", "fc_0123456789abcdef"];

/** A session of three tool calls, approved and answered, over two requests. */
function threeCalls(id: string): string {
  const b = traceBuilder(id).meta().tools().user("do three things");
  b.begin().call("exec_command", { cmd: "ls" }, IDS[0]!)
    .call("read_file", { file_path: "a.txt" }, IDS[1]!).usage(1, 2, 3).end()
    .approve(IDS[0]!).output(IDS[0]!, "a.txt").approve(IDS[1]!, "deny")
    .output(IDS[1]!, "denied");
  b.begin().call("write_file", { file_path: "b.txt", content: "b" }, IDS[2]!).usage(1, 2, 3)
    .end().approve(IDS[2]!).output(IDS[2]!, "Wrote b.txt");
  b.begin().text("Done.").usage(1, 1, 1).end();
  return b.jsonl();
}

/** The text a reader of the page sees: tags (and their attributes) dropped. */
const visibleText = (html: string) =>
  html.replace(/<(script|style)[\s\S]*?<\/\1>/g, "").replace(/<[^>]*>/g, "");

Deno.test("trace export md and html number tool calls #1, #2, #3 as trace show does, no raw ids", async () => {
  await withTempDir(async (dir) => {
    const id = sid("ca11ab1e");
    const path = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(path, threeCalls(id));

    const show = await runCli(["trace", "show", path]);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /\[#1\] exec_command/);
    assert.match(show.stdout, /\[#2\] read_file/);
    assert.match(show.stdout, /\[#3\] write_file/);

    const md = await runCli(["trace", "export", path, "--format", "md"]);
    assert.equal(md.code, 0, md.stderr);
    assert.match(md.stdout, /\*\*Tool call #1\*\* `exec_command <- \$ ls`/);
    assert.match(md.stdout, /\*\*Tool call #2\*\* `read_file a\.txt`/);
    assert.match(md.stdout, /\*\*Tool call #3\*\* `write_file b\.txt`/);
    assert.match(md.stdout, /Output of #1 exec_command/);
    assert.match(md.stdout, /Output of #3 write_file/);
    assert.match(md.stdout, /\(#2\)/);
    for (const raw of IDS) assert.ok(!md.stdout.includes(raw), `md shows ${raw}`);

    const html = await runCli(["trace", "export", path, "--format", "html"]);
    assert.equal(html.code, 0, html.stderr);
    const text = visibleText(html.stdout);
    assert.match(text, /exec_command .*\$ ls · #1/);
    assert.match(text, /read_file +a\.txt · #2/);
    assert.match(text, /#3 write_file output/);
    for (const raw of IDS) assert.ok(!text.includes(raw), `html shows ${raw}`);
    // The ids stay as anchors and data attributes.
    assert.ok(html.stdout.includes(`id="call-${IDS[0]}"`));
    assert.ok(html.stdout.includes(`data-call="${IDS[2]}"`));
  });
});
