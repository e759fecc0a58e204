import assert from "node:assert/strict";
import {
  createSafeTextStream,
  escapeControls,
  MAX_STRING_SEQUENCE,
  safeText,
} from "../../lib/display/terminal_text.ts";

/** Anything a terminal would act on: C0 but newline and tab, DEL, C1, bidi controls. */
// deno-lint-ignore no-control-regex
const ACTIVE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

Deno.test("safeText removes window-title, clipboard (OSC 52), screen-clear and C1 sequences", () => {
  assert.equal(safeText("a\x1b]0;owned\x07b"), "ab");
  assert.equal(safeText("a\x1b]2;owned\x1b\\b"), "ab");
  assert.equal(safeText("a\x1b]52;c;cm0gLXJmIH4=\x07b"), "ab");
  assert.equal(safeText("a\x1b[2J\x1b[H\x1b[3;1Hb"), "ab");
  assert.equal(safeText("a\x9b2Jb"), "ab", "C1 CSI");
  assert.equal(safeText("a\x9d0;owned\x9cb"), "ab", "C1 OSC ended by C1 ST");
  assert.equal(safeText("a\x1bPq#0;2;0;0;0\x1b\\b"), "ab", "DCS (sixel)");
  assert.equal(safeText("a\x1bcb\x1b(Bc\x1b7d"), "abcd", "reset, charset and save-cursor escapes");
  assert.equal(safeText("\x1b[31mred\x1b[0m"), "red", "colours from a command are removed too");
});

Deno.test("safeText turns carriage returns into line breaks so nothing is overwritten", () => {
  assert.equal(safeText("rm -rf ~\rls -la"), "rm -rf ~\nls -la");
  assert.equal(safeText("one\r\ntwo\r\n"), "one\ntwo\n");
  assert.equal(safeText("a\r\r\nb"), "a\n\nb");
});

Deno.test("safeText shows other control characters and bidi overrides, keeps newline and tab", () => {
  assert.equal(safeText("bell\x07 bs\b del\x7f nel\x85"), "bell\\x07 bs\\x08 del\\x7f nel\\x85");
  assert.equal(safeText("abc\u202edcba"), "abc\\u202edcba");
  assert.equal(safeText("col1\tcol2\nnext"), "col1\tcol2\nnext");
  assert.equal(safeText("plain ünïcödé ✓"), "plain ünïcödé ✓");
});

Deno.test("safeText shows an unterminated or overlong string sequence instead of swallowing what follows", () => {
  assert.equal(safeText("x\x1b]0;never ends"), "x\\x1b]0;never ends");
  assert.equal(safeText("x\x1b]0;cut\nrest"), "x\\x1b]0;cut\nrest");
  const long = "A".repeat(MAX_STRING_SEQUENCE + 10);
  const shown = safeText(`\x1b]52;c;${long}\x07after`);
  assert.ok(shown.endsWith("A\\x07after"), shown.slice(-30));
  assert.ok(shown.startsWith("\\x1b]52;c;AAAA"));
  assert.equal(safeText("end\x1b"), "end\\x1b");
  assert.equal(safeText("\x1b\x1b[2Jx"), "\\x1bx");
});

Deno.test("the stream form gives the same text however the input is cut", () => {
  const text = "t\x1b]0;title\x07 x\x1b]52;c;Zm9v\x1b\\ y\x9b2J\x1b[1;31mz\r\nw\rv\x1bc\x07" +
    "\x9d8;;http://e\x9c\x1bP1$r\x1b\\ok\x1b";
  const whole = safeText(text);
  assert.equal(whole, "t x yz\nw\nv\\x07ok\\x1b");
  for (let k = 0; k <= text.length; k++) {
    const s = createSafeTextStream();
    assert.equal(s.push(text.slice(0, k)) + s.push(text.slice(k)) + s.end(), whole, `cut at ${k}`);
  }
  const s = createSafeTextStream();
  let byChar = "";
  for (const ch of text) byChar += s.push(ch);
  assert.equal(byChar + s.end(), whole);
});

Deno.test("nothing a terminal acts on survives safeText, whatever the input (seeded fuzz)", () => {
  const alphabet = [
    "a",
    " ",
    "\n",
    "\t",
    "\r",
    "\x1b",
    "[",
    "]",
    "P",
    "\\",
    "\x07",
    "0",
    ";",
    "m",
    "J",
    "\x9b",
    "\x9c",
    "\x9d",
    "\x00",
    "\x7f",
    "\u202e",
  ];
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let n = 0; n < 2000; n++) {
    let text = "";
    const len = next() % 40;
    for (let i = 0; i < len; i++) text += alphabet[next() % alphabet.length];
    const out = safeText(text);
    assert.ok(!ACTIVE.test(out), `${JSON.stringify(text)} -> ${JSON.stringify(out)}`);
  }
});

Deno.test("escapeControls shows every control character and removes nothing", () => {
  assert.equal(
    escapeControls("printf '\x1b]52;c;eA==\x07'\nnext\u2066"),
    "printf '\\x1b]52;c;eA==\\x07'\\x0anext\\u2066",
  );
  assert.equal(escapeControls("plain text"), "plain text");
  const text = "ab\x1b[2J\rcd";
  for (let k = 0; k <= text.length; k++) {
    assert.ok(escapeControls(text).startsWith(escapeControls(text.slice(0, k))), "prefix-stable");
  }
});

Deno.test("safeText removes characters drawn as nothing; escapeControls shows them", () => {
  // LRM, RLM, CGJ, ALM, VS16, tag A (astral), soft hyphen, function application, Hangul filler.
  const hidden = [
    "\u200e",
    "\u200f",
    "\u034f",
    "\u061c",
    "\ufe0f",
    "\u{e0041}",
    "\u00ad",
    "\u2061",
    "\u3164",
    "\u2028",
    "\u2029",
  ];
  for (const h of hidden) {
    assert.equal(safeText(`ABCDE${h}FGHIJ`), "ABCDEFGHIJ", JSON.stringify(h));
    assert.ok(!escapeControls(`a${h}b`).includes(h), JSON.stringify(h));
  }
  assert.equal(escapeControls("a\u{e0041}b"), "a\\u{e0041}b");
  assert.equal(escapeControls("a\u200eb"), "a\\u200eb");
  // Bidi overrides stay visible as before; other astral characters pass.
  assert.equal(safeText("a\u202eb\u{1f427}"), "a\\u202eb\u{1f427}");
  // A tag character cut between two chunks is still removed.
  const s = createSafeTextStream();
  const text = "x\u{e0041}y\u{1f427}";
  let out = "";
  for (let i = 0; i < text.length; i++) out += s.push(text[i]!);
  assert.equal(out + s.end(), "xy\u{1f427}");
});
