// The HTML export's Markdown: rendered from an allowlist, never passed through.
import assert from "node:assert/strict";
import { MARKDOWN_MAX_CHARS, markdownToHtml } from "../../lib/inspect/markdown_html.ts";
import { loadMarkdownLexer } from "../../lib/inspect/markdown.ts";

// marked loads on first use; the HTML export loads it before it renders.
await loadMarkdownLexer();

Deno.test("Markdown becomes headings, emphasis, lists, quotes, tables, code and links in HTML", () => {
  const html = markdownToHtml(
    [
      "# Title",
      "",
      "Some *em*, **bold**, ~~del~~, `a < b` and [docs](https://example.org/a?b=1&c=2).",
      "",
      "> quoted",
      "",
      "- one",
      "- two",
      "",
      "3. three",
      "",
      "| Name | Qty |",
      "|:-----|----:|",
      "| apple | 3 |",
      "",
      "```ts",
      "if (a < b && c) {}",
      "```",
      "",
      "Tom &amp; Jerry, &lt;b&gt; and `&amp;` stays in code.",
    ].join("\n"),
  );
  assert.equal(
    html,
    "<h1>Title</h1>" +
      '<p>Some <em>em</em>, <strong>bold</strong>, <del>del</del>, <code>a &lt; b</code> and <a href="https://example.org/a?b=1&amp;c=2" rel="noopener noreferrer nofollow" referrerpolicy="no-referrer">docs</a>.</p>' +
      "<blockquote><p>quoted</p></blockquote>" +
      "<ul><li>one</li><li>two</li></ul>" +
      '<ol start="3"><li>three</li></ol>' +
      '<table class="md-table"><thead><tr><th class="al-left">Name</th><th class="al-right">Qty</th></tr></thead>' +
      '<tbody><tr><td class="al-left">apple</td><td class="al-right">3</td></tr></tbody></table>' +
      '<pre class="md-code" data-lang="ts"><code>if (a &lt; b &amp;&amp; c) {}</code></pre>' +
      "<p>Tom &amp; Jerry, &lt;b&gt; and <code>&amp;amp;</code> stays in code.</p>",
  );
});

Deno.test("hostile Markdown yields no element, attribute or URL the allowlist does not write", () => {
  const hostile = [
    "<script>alert(1)</script>",
    "",
    "<img src=x onerror=alert(2)> inline <b onclick=alert(3)>bold</b>",
    "",
    "[click](javascript:alert(4)) [data](data:text/html;base64,PHNjcmlwdD4=) [rel](/etc/passwd)",
    "[enc](&#106;avascript:alert(5)) [sp]( javascript:alert(6)) [tab](java\tscript:alert(7))",
    "![remote](https://evil.example/pixel.png) ![data](data:image/png;base64,AAAA)",
    "",
    '[t](https://ok.example "x\\" onmouseover=alert(8) y")',
    "",
    '```html" onload="alert(9)',
    "<svg onload=alert(10)>",
    "```",
    "",
    "| <iframe src=//evil.example> | b |",
    "|---|---|",
    "| <style>*{}</style> | &#x3c;script&#x3e; |",
  ].join("\n");
  const html = markdownToHtml(hostile);
  // Only tags the renderer writes itself.
  const tags = new Set([...html.matchAll(/<\/?([a-z0-9]+)/gi)].map((m) => m[1]!.toLowerCase()));
  const allowed = ["p", "a", "code", "pre", "span", "table", "thead", "tbody", "tr", "th", "td"];
  for (const t of tags) assert.ok(allowed.includes(t), `unexpected <${t}> in ${html}`);
  // No event handler, no script URL, no image: every attribute is one the renderer writes.
  for (const m of html.matchAll(/<[a-z0-9]+((?:\s+[a-z-]+="[^"]*")*)\s*>/gi)) {
    for (const a of m[1]!.matchAll(/([a-z-]+)="([^"]*)"/gi)) {
      assert.ok(["href", "rel", "referrerpolicy", "class", "data-lang"].includes(a[1]!), a[0]);
      if (a[1] === "href") assert.match(a[2]!, /^https:\/\/ok\.example$/);
    }
  }
  assert.equal(html.match(/<a /g)?.length, 1, "only the https link is a link");
  assert.doesNotMatch(html, /<img|<script|<iframe|<svg|<style|<[^>]*\son[a-z]+\s*=/i);
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/, "raw HTML shows as text");
  assert.match(
    html,
    /\[image: remote\]<\/span> <span class="md-url">\(https:\/\/evil\.example\/pixel\.png\)/,
  );
});

Deno.test("a text over the Markdown bound is shown as escaped plain text", () => {
  const long = "# not a heading <script>\n".repeat(MARKDOWN_MAX_CHARS / 24 + 1);
  assert.ok(long.length > MARKDOWN_MAX_CHARS);
  assert.equal(
    markdownToHtml(long),
    `<pre class="md-plain">${
      "# not a heading &lt;script&gt;\n".repeat(MARKDOWN_MAX_CHARS / 24 + 1)
    }</pre>`,
  );
  assert.equal(markdownToHtml("# heading"), "<h1>heading</h1>");
});
