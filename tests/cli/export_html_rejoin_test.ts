// The HTML export renders an answer's Markdown after masking it: markup between pieces of a value,
// each too short to mask, was removed by the rendering and the page showed the value whole (attack
// round 24 secrets B5). The page's visible text holds no 8-character piece of a secret.
import assert from "node:assert/strict";
import { turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { withModelRoot } from "../support/roots.ts";
import { assertNoPieceOf } from "../support/secrets.ts";

const V = "Md7Zr2Kx9Wc4Lp8Tn3Hv6Bd1";
const bold = `${V.slice(0, 6)}**${V.slice(6, 12)}**${V.slice(12, 18)}**${V.slice(18)}**`;
const code = `${V.slice(0, 6)}\`${V.slice(6, 12)}\`${V.slice(12, 18)}\`${V.slice(18)}\``;
/** Markup the model escaped: shown as `**`, it became markup again once the shown text was put
 * back as Markdown (attack round 25 secrets B1). */
const escaped = `${V.slice(0, 6)}\\*\\*${V.slice(6, 12)}\\*\\*${V.slice(12, 18)}\\*\\*${
  V.slice(18)
}\\*\\*`;

/** What a browser shows of `html`: tags gone, the references it uses decoded. */
function visible(html: string): string {
  return html.replace(/<style[\s\S]*?<\/style>/g, "").replace(/<script[\s\S]*?<\/script>/g, "")
    .replace(/<[^>]+>/g, "").replace(/&quot;/g, '"').replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

Deno.test("trace export --format html shows no secret its Markdown rendering joins from pieces", async () => {
  await withModelRoot({
    turns: [turn.text(`bold: ${bold}\n\ncode: ${code}\n\nescaped: ${escaped}\n\nand the rest`)],
  }, async (sb) => {
    const cli = async (args: string[]) => {
      const r = await runCli(["--root", sb.root, ...args], { env: { NO_COLOR: "1" } });
      assert.equal(r.code, 0, `penguin ${args.join(" ")}: ${r.stderr}`);
      return r.stdout + (args[0] === "run" ? r.stderr : "");
    };
    const run = await cli(["run", "--workspace", sb.workspace, "-m", "go"]);
    const sid = /session-[0-9-]{19}-[0-9a-f]{8}/.exec(run)?.[0];
    assert.ok(sid, run);
    await cli(["config", "vault", "set", "--key", "DB_PW", "--value", V]);
    const page = visible(await cli(["trace", "export", sid, "--format", "html"]));
    assert.ok(page.includes("and the rest"), "the answer is on the page");
    assert.ok(page.includes("[redacted:vault:DB_PW]"), page.slice(0, 2000));
    assertNoPieceOf(page, [V], "the page's visible text");
  }, { visible: true });
});
