// The terminal Markdown renderer: what the model's answers look like on a colour terminal.
import assert from "node:assert/strict";
import { builtinToolPreviews } from "../../lib/agent/tool_previews.ts";
import type { OmniMessage } from "../../lib/protocol/types.ts";
import { createMarkdownStream, createRenderer, renderMarkdown } from "../../lib/cli/render/mod.ts";
import { loadMarkdownLexer } from "../../lib/inspect/markdown.ts";

// marked loads on first use; penguin's callers load it before they render (terminalMarkdown).
await loadMarkdownLexer();

// deno-lint-ignore no-control-regex
const SGR = /\x1b\[[0-9;]*m/g;
const plain = (s: string) => s.replace(SGR, "");

/**
 * A tiny terminal: enough of one to replay what the stream writes (text,
 * `\n`, `\r`, cursor up `ESC[nA`, erase below `ESC[J`, SGR ignored), wide
 * enough that nothing wraps unless `columns` says so.
 */
function screenOf(output: string, columns = 1000): string {
  const lines: string[] = [""];
  let row = 0;
  let col = 0;
  let i = 0;
  while (i < output.length) {
    const c = output[i]!;
    if (c === "\x1b") {
      // deno-lint-ignore no-control-regex
      const m = /^\x1b\[([0-9;]*)([A-Za-z])/.exec(output.slice(i));
      assert.ok(m, `a CSI sequence at ${JSON.stringify(output.slice(i, i + 12))}`);
      if (m[2] === "A") row = Math.max(0, row - Number(m[1] || 1));
      else if (m[2] === "J") {
        lines[row] = lines[row]!.slice(0, col);
        lines.length = row + 1;
      } else assert.equal(m[2], "m", `only SGR, A and J are used: ${m[0]}`);
      i += m[0].length;
      continue;
    }
    if (c === "\n") {
      row++;
      col = 0;
      if (lines.length <= row) lines.push("");
    } else if (c === "\r") col = 0;
    else {
      if (col >= columns) {
        row++;
        col = 0;
        if (lines.length <= row) lines.push("");
      }
      const l = lines[row]!.padEnd(col);
      lines[row] = l.slice(0, col) + c + l.slice(col + 1);
      col++;
    }
    i++;
  }
  return lines.join("\n");
}

const SAMPLE = [
  "# Release notes",
  "",
  "Some *emphasis*, **bold**, ~~gone~~, `inline code` and [the docs](https://example.org/docs).",
  "",
  "> A quoted line with **bold**",
  "> and a second one",
  "",
  "- first item",
  "- second item",
  "  - nested item",
  "3. third",
  "4. fourth",
  "",
  "| Name | Qty |",
  "|------|----:|",
  "| apple | 3 |",
  "| kiwi | 12 |",
  "",
  "```ts",
  "const x = 1;",
  "```",
  "",
  "---",
  "The end.",
  "",
].join("\n");

Deno.test("Markdown renders headings, emphasis, lists, quotes, links, tables and code for a terminal", () => {
  const out = renderMarkdown(SAMPLE, { columns: 40 });
  const text = plain(out);
  const lines = text.split("\n");
  // Heading: no "#", bold and underlined.
  assert.equal(lines[0], "Release notes");
  assert.ok(out.startsWith("\x1b[1m\x1b[4mRelease notes\x1b[24m\x1b[22m\n"));
  // Inline styles: italic, bold, strikethrough, code on a background, link with its address.
  assert.ok(out.includes("\x1b[3memphasis\x1b[23m"));
  assert.ok(out.includes("\x1b[1mbold\x1b[22m"));
  assert.ok(out.includes("\x1b[9mgone\x1b[29m"));
  assert.ok(out.includes("\x1b[48;5;236;38;5;252minline code\x1b[39;49m"));
  assert.match(text, /the docs \(https:\/\/example\.org\/docs\)/);
  // A quote is a bar, never the "> " of the user's own prompt.
  assert.match(text, /^│ A quoted line with bold\n│ and a second one$/m);
  assert.doesNotMatch(text, /^> /m);
  // Lists: bullets, nesting, ordered numbers kept.
  assert.ok(
    text.includes("\n• first item\n• second item\n  • nested item\n3. third\n4. fourth\n"),
    text,
  );
  // A box-drawn table with the right column right-aligned.
  assert.ok(
    text.includes(
      "\n┌───────┬─────┐\n│ Name  │ Qty │\n├───────┼─────┤\n│ apple │   3 │\n│ kiwi  │  12 │\n└───────┴─────┘\n",
    ),
    text,
  );
  // Fenced code: no fence lines, the code on a background spanning the width.
  assert.doesNotMatch(text, /```/);
  assert.ok(out.includes(`\x1b[48;5;236;38;5;252m const x = 1;${" ".repeat(26)}\x1b[39;49m\n`));
  assert.match(text, /^─{40}\nThe end\.$/m);
});

Deno.test("hostile Markdown cannot put an escape sequence on the terminal", () => {
  const hostile = [
    "# \x1b]0;pwned\x07Title",
    "Text \x1b[2J clear, \x9b31m C1, encoded &#27;[31m and &#x1b;]52;c;aGk=&#7; too.",
    "`code \x1b[5m blink`",
    '[link](javascript:alert(1) "t\x1b[8m") and ![img](http://evil.example/x.png)',
    "| a\x1b[41m | b |",
    "|---|---|",
    "| &#27;[1m | c |",
    "```",
    "\x1bPdcs payload\x1b\\ in code",
    "```",
    "<script>alert(1)</script> <img src=x onerror=alert(1)>",
  ].join("\n");
  const check = (out: string) => {
    // Only penguin's own SGR codes and the stream's cursor moves remain.
    // deno-lint-ignore no-control-regex
    const rest = out.replace(SGR, "").replace(/\r|\x1b\[\d*A|\x1b\[J/g, "");
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(rest, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/, JSON.stringify(rest));
    assert.ok(!out.includes("\x1b[5m") && !out.includes("\x1b[8m") && !out.includes("\x1b[41m"));
    assert.ok(!out.includes("\x1b[31m") && !out.includes("\x1b]"));
  };
  check(renderMarkdown(hostile));
  // The live path: the screen sanitizes, then streams the Markdown.
  const buf = streamed(hostile, 3, true, { columns: () => 80 });
  check(buf);
  assert.match(plain(buf), /<script>alert\(1\)<\/script>/, "raw HTML shows as text");
  assert.match(plain(buf), /\[image: img\] \(http:\/\/evil\.example\/x\.png\)/);
});

function textMessages(text: string, chunk: number): OmniMessage[] {
  const ts = new Date(0).toISOString();
  const part = (event_type: "start" | "delta" | "stop", t: string): OmniMessage => ({
    timestamp: ts,
    type: "model_msg",
    payload: {
      type: "partial_text",
      role: "assistant",
      event_type,
      text: t,
      stop_reason: "completed",
    },
  });
  const out = [part("start", "")];
  for (let i = 0; i < text.length; i += chunk) out.push(part("delta", text.slice(i, i + chunk)));
  out.push(part("stop", ""));
  out.push({
    timestamp: ts,
    type: "model_msg",
    payload: { type: "text", role: "assistant", text, stop_reason: "completed" },
  });
  return out;
}

type MarkdownOptions = NonNullable<Parameters<typeof createRenderer>[0]["markdown"]>;

/** A renderer that writes into a buffer; `out()` is all it wrote. */
function bufferedRenderer(color: boolean, markdown: MarkdownOptions, collapse = false) {
  let buf = "";
  const r = createRenderer({
    toolPreviews: builtinToolPreviews,
    write: (t) => (buf += t),
    color,
    collapse,
    markdown,
  });
  return { r, out: () => buf };
}

/** What the renderer writes for one task whose answer `text` streams in fragments of `chunk`. */
function streamed(text: string, chunk: number, color: boolean, markdown: MarkdownOptions): string {
  const { r, out } = bufferedRenderer(color, markdown);
  r.beginTask();
  for (const m of textMessages(text, chunk)) r.push(m);
  r.endTask();
  return out();
}

Deno.test("streamed Markdown ends on screen exactly as the whole text renders, whatever the fragment size", () => {
  const whole = screenOf(renderMarkdown(SAMPLE, { columns: 60 }), 60);
  for (const chunk of [1, 2, 7, 50, SAMPLE.length]) {
    const buf = streamed(SAMPLE, chunk, true, { columns: () => 60, rows: () => 40 });
    assert.equal(screenOf(buf, 60), whole, `chunks of ${chunk}`);
  }
});

Deno.test("a streamed line that wraps is erased row by row before it is redrawn", () => {
  const s = createMarkdownStream({ columns: () => 20 });
  const long = "word ".repeat(10).trim(); // 49 columns: 3 rows at 20 columns
  let out = s.push(`**${long.slice(0, 45)}`); // a 47-column preview: 3 rows
  out += s.push(`${long.slice(45)}**\nnext`);
  out += s.end();
  assert.equal(
    screenOf(out, 20),
    `${long.slice(0, 20)}\n${long.slice(20, 40)}\n${long.slice(40)}\nnext\n`,
  );
  assert.ok(out.includes("\r\x1b[2A\x1b[J\x1b[1m"), "cursor up 2 rows, erase, then the bold line");
});

Deno.test("without colour the renderer prints the model's Markdown raw", () => {
  const buf = streamed("# Title\n\n> quote\n", 4, false, { columns: () => 80 });
  assert.equal(buf, "# Title\n\n> quote\n");
});

Deno.test("resumed history (chat --resume) renders the model's Markdown on a colour terminal only", () => {
  const ts = new Date(0).toISOString();
  const history: OmniMessage[] = [
    {
      timestamp: ts,
      type: "model_msg",
      payload: { type: "text", role: "user", text: "> not a quote", stop_reason: "completed" },
    },
    {
      timestamp: ts,
      type: "model_msg",
      payload: {
        type: "text",
        role: "assistant",
        text: "## Done\n\n> a quote\n",
        stop_reason: "completed",
      },
    },
  ];
  const draw = (color: boolean) => {
    const { r, out } = bufferedRenderer(color, { columns: () => 80 }, true);
    r.history(history);
    return out();
  };
  assert.equal(plain(draw(true)), "> > not a quote\nDone\n\n│ a quote\n");
  assert.equal(draw(false), "> > not a quote\n## Done\n\n> a quote\n\n");
});
