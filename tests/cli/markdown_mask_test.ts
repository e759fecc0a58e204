// Markdown drawn on a colour terminal must not join what masking kept apart: markup takes no cells
// on screen, so pieces of a vault value too short to mask each, separated by `**` in the text the
// masker saw, showed as the whole value in bold (attack round 25 secrets B6). A block whose shown
// text the session's masker would mask is drawn as that text masked, plain.
import assert from "node:assert/strict";
import { createMarkdownStream, renderMarkdown } from "../../lib/cli/render/mod.ts";
import { loadMarkdownLexer } from "../../lib/inspect/markdown.ts";
import { maskSecrets, type Secret } from "../../lib/tools/secret_mask.ts";
import { turn } from "../support/model_server.ts";
import { withModelRoot } from "../support/roots.ts";
import { inRoot, runCliOk } from "../support/cli.ts";
import { hasTmux, penguinScript, startPane } from "../support/tmux.ts";

await loadMarkdownLexer();

// deno-lint-ignore no-control-regex
const SGR = /\x1b\[[0-9;]*m/g;
const VALUE = "Md7Zr2Kx9Wc4Lp8Tn3Hv6Bd1";
const secrets: Secret[] = [{ kind: "vault", name: "DB_PW", value: VALUE }];
const mask = (t: string) => maskSecrets(t, secrets);
/** The value in 6-character pieces joined by bold markers, as a model that learned it writes it. */
const split = `${VALUE.slice(0, 6)}**${VALUE.slice(6, 12)}**${VALUE.slice(12, 18)}**${
  VALUE.slice(18)
}**`;

Deno.test("the masker leaves the pieces the model wrote apart: each is too short", () => {
  assert.equal(mask(`bold: ${split}`), `bold: ${split}`);
});

Deno.test("renderMarkdown draws a block that would show a secret masked and plain", () => {
  const out = renderMarkdown(`bold: ${split}\n\nnext paragraph **kept bold**\n`, { mask });
  assert.equal(out.replace(SGR, "").includes(VALUE.slice(0, 8)), false, out);
  assert.match(out, /bold: \[redacted:vault:DB_PW\]/);
  assert.ok(out.includes("\x1b[1mkept bold\x1b[22m"), "other blocks keep their Markdown");
  // Without a masker (no session secrets), the block renders as before.
  assert.match(renderMarkdown(`bold: ${split}\n`).replace(SGR, ""), new RegExp(VALUE.slice(0, 12)));
});

Deno.test("streamed Markdown draws a line that would show a secret masked and plain", () => {
  for (const size of [1, 5, 64, 4096]) {
    const text = `intro\nbold: ${split}\n| a | b |\n|---|---|\n| ${split} | x |\n\nend\n`;
    const stream = createMarkdownStream({ mask });
    let out = "";
    for (let i = 0; i < text.length; i += size) out += stream.push(text.slice(i, i + size));
    out += stream.end();
    // What ends on screen: every rendered (redrawn) line; raw previews are erased.
    const rendered = out.replace(SGR, "");
    assert.equal(rendered.includes(VALUE.slice(0, 8)), false, `${size}: ${JSON.stringify(out)}`);
    assert.match(rendered, /\[redacted:vault:DB_PW\]/);
  }
});

Deno.test({
  name: "penguin run on a colour terminal never draws a secret's pieces joined",
  ignore: !hasTmux,
  async fn() {
    await withModelRoot({ turns: [turn.text(`bold: ${split}\n\ndone **here**`)] }, async (sb) => {
      await runCliOk([
        "--root",
        sb.root,
        "config",
        "vault",
        "set",
        "--key",
        "DB_PW",
        "--value",
        VALUE,
      ]);
      const script = await penguinScript(sb.workspace, inRoot(sb, "run", "-m", "go"), {
        TERM: "xterm-256color",
      });
      const pane = await startPane(script.command, 120, 40);
      try {
        const screen = await pane.waitFor(/To continue this conversation/, "the run's end");
        assert.match(screen, /bold: \[redacted:vault:DB_PW\]/, screen);
        assert.equal(screen.includes(VALUE.slice(0, 8)), false, screen);
        assert.ok(
          (await pane.screen({ escapes: true })).includes("\x1b[1mhere"),
          "Markdown is drawn",
        );
      } finally {
        await pane.close();
        await Deno.remove(script.path).catch(() => {});
      }
    });
  },
});
