import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO, runCli } from "../support/cli.ts";
import { PLANTED } from "../inspect/_secrets.ts";
import { decodeSpans, named } from "../telemetry/_otlp.ts";
import {
  fixtureFiles,
  FIXTURES,
  fixturesPresent,
  sid,
  traceBuilder,
  withTempDir,
} from "../inspect/_support.ts";

// A trace with a planted secret in every kind of field, and some markup.
function secretTrace(id: string) {
  const b = traceBuilder(id, { meta: { system_prompt: `prompt with ${PLANTED[0]!.text}` } })
    .meta().tools();
  PLANTED.forEach((p, i) => {
    const cid = `call_${i}`;
    b.user(`please use ${p.text}`).begin().thinking(`thinking about ${p.text}`)
      .call("exec_command", { cmd: p.text }, cid).approve(cid).usage(1, 2, 3).end()
      .output(cid, `out: ${p.text}`);
  });
  b.begin().end("failed", { error_message: `upstream said ${PLANTED[1]!.text}`, attempt: 1 });
  b.user('<script>alert("pwned")</script> & <img src=x onerror=alert(1)>')
    .begin().text("answer with <b>tags</b> & 'quotes'").usage(1, 1, 1).end();
  return b;
}

Deno.test("penguin trace export redacts every planted secret in md, json and html, and --no-redact keeps them", async () => {
  await withTempDir(async (dir) => {
    const id = sid("5ec7e700");
    const path = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(path, secretTrace(id).jsonl());
    for (const format of ["md", "json", "html"]) {
      const r = await runCli(["trace", "export", path, "--format", format]);
      assert.equal(r.code, 0, r.stderr);
      for (const p of PLANTED) {
        assert.ok(!r.stdout.includes(p.secret), `${format}: ${p.kind} leaked`);
        assert.ok(r.stdout.includes(`[redacted:${p.kind}]`), `${format}: no marker for ${p.kind}`);
      }
      const raw = await runCli(["trace", "export", path, "--format", format, "--no-redact"]);
      assert.equal(raw.code, 0, raw.stderr);
      for (const p of PLANTED) {
        // JSON escapes newlines; compare the first line of each secret.
        assert.ok(raw.stdout.includes(p.secret.split("\n")[0]!), `${format}: ${p.kind} missing`);
      }
      assert.ok(!raw.stdout.includes("[redacted:"), format);
    }
  });
});

Deno.test("penguin trace export html escapes trace text and is self-contained", async () => {
  await withTempDir(async (dir) => {
    const id = sid("5ec7e701");
    const path = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(path, secretTrace(id).jsonl());
    const out = join(dir, "page.html");
    const r = await runCli(["trace", "export", path, "-o", out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /exported .* \(html\) to /);
    const html = await Deno.readTextFile(out);
    assert.ok(html.startsWith("<!doctype html>"));
    assert.ok(html.includes("&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;"));
    assert.ok(!html.includes('<script>alert("pwned")'));
    assert.ok(!html.includes("<img src=x"));
    assert.equal(html.match(/<script>/g)?.length, 1, "only the page's own script");
    assert.doesNotMatch(html, /(src|href)\s*=\s*["']?(https?:)?\/\//i);
    assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
    assert.match(html, /<svg class="chart"/);
    assert.match(html, /<details class="out"/);
  });
});

Deno.test({
  name: "penguin trace export writes every fixture trace as md, json and html",
  ignore: !fixturesPresent,
  async fn() {
    for (const file of fixtureFiles()) {
      const first = JSON.parse(Deno.readTextFileSync(file).split("\n")[0]!);
      const id: string = first.payload.session_id;
      for (const format of ["md", "json", "html"]) {
        const r = await runCli(["trace", "export", file, "--format", format]);
        assert.equal(r.code, 0, `${file} ${format}: ${r.stderr}`);
        assert.ok(r.stdout.includes(id), `${file} ${format}`);
        if (format === "json") {
          const conv = JSON.parse(r.stdout);
          assert.equal(conv.format, "penguin.conversation/1");
          assert.equal(conv.session.session_id, id);
          assert.ok(conv.items.some((i: { kind: string }) => i.kind === "user"));
          assert.ok(conv.requests.length > 0);
        }
      }
    }
  },
});

Deno.test({
  name: "penguin trace export shows a subagent child in the parent's family",
  ignore: !fixturesPresent,
  async fn() {
    const parent = fixtureFiles().find((f) => f.endsWith("05-subagent-parent.jsonl"))!;
    const r = await runCli(["trace", "export", parent, "--format", "json"]);
    assert.equal(r.code, 0, r.stderr);
    const conv = JSON.parse(r.stdout);
    assert.equal(conv.family.children.length, 1);
    assert.ok(conv.family.children[0].files[0].endsWith("05-subagent-child.jsonl"));
  },
});

Deno.test("penguin trace export refuses a target holding several sessions (exit 2)", async () => {
  await withTempDir(async (dir) => {
    for (const s of ["00000001", "00000002"]) {
      await Deno.writeTextFile(
        join(dir, `${sid(s)}_001.jsonl`),
        traceBuilder(sid(s)).meta().user("x").jsonl(),
      );
    }
    const r = await runCli(["trace", "export", dir]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /holds 2 sessions/);
  });
});

Deno.test("penguin trace export of a directory holding a parent and its subagent child exports the parent, the child inline", async () => {
  const dir = join(REPO, "samples", "subagents");
  const parent = "session-2026-12-01-23-07-57-b48796fc";
  const child = "session-2026-12-01-23-07-57-d7ffb7d4";
  const r = await runCli(["trace", "export", dir, "--format", "json"]);
  assert.equal(r.code, 0, r.stderr);
  const conv = JSON.parse(r.stdout);
  assert.equal(conv.session.session_id, parent);
  assert.deepEqual(
    conv.subagents.map((c: { session: { session_id: string } }) => c.session.session_id),
    [
      child,
    ],
  );
  const html = await runCli(["trace", "export", dir, "--format", "html"]);
  assert.equal(html.code, 0, html.stderr);
  assert.ok(html.stdout.includes(parent) && html.stdout.includes(child));
});

Deno.test("penguin trace export redacts tool-call headings before cutting them: no prefix of a secret survives", async () => {
  const key = "sk-proj-Zx9QwErTyUiOpAsDfGhJkL0123";
  const password = "hunter2";
  await withTempDir(async (dir) => {
    const id = sid("5ec7e702");
    const b = traceBuilder(id).meta().tools().user("run them").begin();
    // The heading keeps 101 chars of the command: these paddings put its cut at every
    // position inside the key and inside the URL password.
    for (let pad = 58; pad <= 86; pad++) {
      b.call("exec_command", { cmd: `${"x".repeat(pad)} OPENAI_API_KEY=${key}` }, `call_k${pad}`);
      b.call(
        "exec_command",
        { cmd: `${"y".repeat(pad)} curl https://bob:${password}@host/x` },
        `call_u${pad}`,
      );
    }
    const path = join(dir, `${id}_001.jsonl`);
    await Deno.writeTextFile(path, b.usage(1, 1, 1).end().jsonl());
    for (const format of ["md", "json", "html"]) {
      const r = await runCli(["trace", "export", path, "--format", format]);
      assert.equal(r.code, 0, r.stderr);
      for (const secret of [key, password]) {
        for (let n = 6; n <= secret.length; n++) {
          assert.ok(
            !r.stdout.includes(secret.slice(0, n)),
            `${format}: "${secret.slice(0, n)}" leaked`,
          );
        }
      }
      assert.ok(r.stdout.includes("OPENAI_API_KEY=[redacted:openai_key]"), format);
      assert.ok(r.stdout.includes("https://bob:[redacted:url_password]@host"), format);
    }
  });
});

Deno.test({
  name: "penguin trace export --format otlp writes an OTLP/JSON request, to stdout or -o, redacted",
  ignore: !fixturesPresent,
  async fn() {
    const parent = join(FIXTURES, "05-subagent-parent.jsonl");
    const r = await runCli(["trace", "export", parent, "--format", "otlp"]);
    assert.equal(r.code, 0, r.stderr);
    const spans = decodeSpans(JSON.parse(r.stdout));
    assert.equal(named(spans, "session ").length, 2, "the child comes along");
    assert.equal(new Set(spans.map((s) => s.traceId)).size, 1);
    const again = await runCli(["trace", "export", parent, "--format", "otlp"]);
    assert.equal(again.stdout, r.stdout, "deterministic");
    await withTempDir(async (dir) => {
      const out = join(dir, "trace.otlp.json");
      const w = await runCli(["trace", "export", parent, "-o", out]); // the name says otlp
      assert.equal(w.code, 0, w.stderr);
      assert.match(w.stderr, /\(otlp\) to /);
      assert.equal(await Deno.readTextFile(out), r.stdout);
      const id = sid("5ec7e702");
      const path = join(dir, `${id}_001.jsonl`);
      await Deno.writeTextFile(path, secretTrace(id).jsonl());
      const full = await runCli(["trace", "export", path, "--format", "otlp", "--include-content"]);
      assert.equal(full.code, 0, full.stderr);
      decodeSpans(JSON.parse(full.stdout));
      for (const p of PLANTED) assert.ok(!full.stdout.includes(p.secret), `${p.kind} leaked`);
      assert.ok(full.stdout.includes("please use"), "contents included on request");
      const bare = await runCli(["trace", "export", path, "--format", "otlp"]);
      assert.ok(!bare.stdout.includes("please use"), "no contents by default");
    });
  },
});
