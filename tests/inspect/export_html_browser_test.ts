// The HTML export opened in real headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core): the conversation renders, a collapsed tool
// output expands on click, the page's own script runs under its CSP, and the
// page requests nothing but its own file:// URL; the model's Markdown answer
// renders (heading, table, code in a monospace font) and its hostile HTML stays
// inert. Screenshots are kept in $PENGUIN_TEST_ARTIFACTS, else test-artifacts/
// (git-ignored); the test prints their paths.
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { runCli } from "../support/cli.ts";
import { REPO } from "../support/cli.ts";
import { sid, traceBuilder, withTempDir } from "./_support.ts";
import { hostHas } from "../support/host_tools.ts";

const CHROMIUM = "/usr/bin/chromium";

/** The model's final answer: Markdown, with hostile bits that must stay inert. */
const ANSWER = [
  "## Row report",
  "",
  "There are 30 rows. **All** of them are `<b>`-free.",
  "",
  "| range | rows |",
  "|-------|-----:|",
  "| 1-10  | 10 |",
  "| 11-30 | 20 |",
  "",
  "```sh",
  "seq 30 | wc -l",
  "```",
  "",
  "> Checked with seq.",
  "",
  "<script>alert('script')</script>",
  "<img src=x onerror=\"alert('img')\"> [click me](javascript:alert('link'))",
  "![tracker](https://tracker.example/pixel.png)",
].join("\n");
const present = hostHas(CHROMIUM);

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

Deno.test({
  name: present
    ? "the HTML export renders in headless Chromium: Markdown answer, expandable tool output, no request, no script from the trace"
    : "the HTML export in headless Chromium (SKIPPED: /usr/bin/chromium is absent; apt-get install chromium)",
  ignore: !present,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await withTempDir(async (dir) => {
      const id = sid("b0a0e001");
      const output = Array.from({ length: 30 }, (_, i) => `row ${i + 1} <b>not bold</b>`).join(
        "\n",
      );
      const b = traceBuilder(id).meta().tools().user("Count the rows, please.")
        .begin().thinking("I should run the command.")
        .call("exec_command", { cmd: "seq 30" }, "call_row").approve("call_row").usage(100, 20, 5)
        .end().output("call_row", output)
        .begin().end("timeout", { error_message: "socket hang up", attempt: 1, retry_in_ms: 2000 })
        .begin().text(ANSWER).usage(120, 10, 8).end();
      const trace = join(dir, `${id}_001.jsonl`);
      await Deno.writeTextFile(trace, b.jsonl());
      const page = join(dir, "export.html");
      const r = await runCli(["trace", "export", trace, "--format", "html", "-o", page]);
      assert.equal(r.code, 0, r.stderr);

      const profile = await Deno.makeTempDir({ prefix: "penguin-chromium-" });
      const context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: ARGS,
      });
      try {
        const tab = await context.newPage();
        const requests: string[] = [];
        const errors: string[] = [];
        tab.on("request", (req) => requests.push(req.url()));
        tab.on("pageerror", (e) => errors.push(String(e)));
        const dialogs: string[] = [];
        tab.on("dialog", (d) => {
          dialogs.push(d.message());
          d.dismiss().catch(() => {});
        });
        tab.on("console", (m) => {
          if (m.type() === "error") errors.push(m.text());
        });
        const url = pathToFileURL(page).href;
        await tab.goto(url);

        assert.equal(await tab.title(), `penguin trace · ${id}`);
        const main = tab.locator("main#conversation");
        assert.match(await main.innerText(), /Count the rows, please\./);
        assert.match(await main.innerText(), /There are 30 rows\./);
        assert.match(
          await main.innerText(),
          /request 2 · \[retry\] connection to the provider failed \(socket hang up\); retry #1 in 2s…/,
        );
        assert.equal(await tab.locator("svg.chart a").count(), 3);

        const out = tab.locator('details.out[data-call="call_row"]');
        const pre = out.locator("pre");
        assert.equal(await out.evaluate((d) => (d as unknown as { open: boolean }).open), false);
        assert.equal(await pre.isVisible(), false);
        await out.locator("summary").click();
        assert.equal(await out.evaluate((d) => (d as unknown as { open: boolean }).open), true);
        assert.equal(await pre.isVisible(), true);
        // Markup from the trace is text, not HTML.
        assert.match(await pre.innerText(), /^row 1 <b>not bold<\/b>$/m);
        assert.equal(await out.locator("b").count(), 0);

        // The page's inline script works under its CSP.
        await tab.locator("#expand-all").click();
        assert.equal(
          await tab.locator("main details").evaluateAll((ds) =>
            ds.every((d) => (d as unknown as { open: boolean }).open)
          ),
          true,
        );

        // The answer is rendered Markdown: a heading, a table, monospace code, a quote.
        const md = main.locator(".msg.assistant .md").last();
        assert.equal(await md.locator("h2").innerText(), "Row report");
        assert.deepEqual(await md.locator("table th").allInnerTexts(), ["range", "rows"]);
        assert.deepEqual(await md.locator("table tbody td").allInnerTexts(), [
          "1-10",
          "10",
          "11-30",
          "20",
        ]);
        assert.equal(await md.locator("blockquote").innerText(), "Checked with seq.");
        const code = md.locator("pre.md-code code");
        assert.equal(await code.innerText(), "seq 30 | wc -l");
        // Monospace as computed: in the code's font, "i" and "M" are equally wide.
        const widths = await code.evaluate((el) => {
          const g = globalThis as unknown as {
            getComputedStyle(e: unknown): { font: string; fontFamily: string };
            document: {
              createElement(t: string): {
                getContext(c: string): { font: string; measureText(t: string): { width: number } };
              };
            };
          };
          const style = g.getComputedStyle(el);
          const ctx = g.document.createElement("canvas").getContext("2d");
          ctx.font = style.font;
          return {
            family: style.fontFamily,
            i: ctx.measureText("iiiiiiiiii").width,
            m: ctx.measureText("MMMMMMMMMM").width,
          };
        });
        assert.match(widths.family, /monospace/);
        assert.ok(widths.i > 0 && Math.abs(widths.i - widths.m) < 0.5, JSON.stringify(widths));
        const prose = await md.locator("p").first().evaluate((el) =>
          (globalThis as unknown as { getComputedStyle(e: unknown): { fontFamily: string } })
            .getComputedStyle(el).fontFamily
        );
        assert.doesNotMatch(prose, /monospace/);
        // The hostile parts are inert text: no script element from the answer, no image, no
        // javascript: link, and (below) no dialog and no request for the remote image.
        assert.equal(await md.locator("script, img, iframe").count(), 0);
        assert.equal(await md.locator("a").count(), 0);
        assert.match(await md.innerText(), /<script>alert\('script'\)<\/script>/);
        assert.match(await md.innerText(), /\[image: tracker\]/);

        const shots = Deno.env.get("PENGUIN_TEST_ARTIFACTS") ?? join(REPO, "test-artifacts");
        await Deno.mkdir(shots, { recursive: true });
        await tab.screenshot({ path: join(shots, "trace_export_html.png"), fullPage: true });
        const answerShot = join(shots, "trace_export_markdown.png");
        await md.screenshot({ path: answerShot });
        console.log(`screenshots: ${join(shots, "trace_export_html.png")}, ${answerShot}`);

        assert.deepEqual(dialogs, []);
        assert.deepEqual(requests, [url]);
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
        await Deno.remove(profile, { recursive: true });
      }
    });
  },
});
