// Secrets split by escape sequences, and secrets in what an MCP server lists: a real `penguin
// run` against the scripted model. A command prints a vault value in 5-character pieces with
// escape sequences (CSI, OSC title, 8-bit CSI, DCS) between them, and an MCP tool returns its
// env value the same way; the server also quotes the value in a tool's description, title,
// input schema and name. Neither value, nor any 8-character piece of it, reaches the model,
// the trace, the run's output or `trace export` / `trace show` — also once escape sequences
// are stripped, as a terminal does.
import assert from "node:assert/strict";
import { join } from "node:path";
import { addMcpServer, DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { safeStrings, safeText } from "../../lib/display/terminal_text.ts";
import type { ModelServer, ScriptedTurn } from "../support/model_server.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { runCli } from "../support/cli.ts";
import { assertNoPieceOf, readAll, setVault, traceViews } from "../support/secrets.ts";
import { makeRoot, withModelRoot } from "../support/roots.ts";
import { cacheServers, denoServer, initDefaultAgent, TEST_SERVER } from "../support/mcp.ts";

const VAULT_VALUE = "Vx1Aw7OCq9Lm2Np4Rt6Yu8Io0Pa3Sd5F";
const MCP_VALUE = "Tkv9NG7kXw6mYN2bQ4cR8dS1eU3fW5gH";

/** Fail when any 8-character piece of a secret occurs in `text`, raw or as a terminal shows it. */
function assertNoPiece(text: string, where: string): void {
  assertNoPieceOf(text, [VAULT_VALUE, MCP_VALUE], where);
  assertNoPieceOf(safeText(text), [VAULT_VALUE, MCP_VALUE], `${where} on a terminal`);
}

/** Characters a terminal draws as nothing (default-ignorable and format characters). */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu;

/** Like {@linkcode assertNoPiece}, also with every invisible character removed from `text`. */
function assertNoHiddenPiece(text: string, where: string): void {
  assertNoPiece(text, where);
  assertNoPiece(text.replace(INVISIBLE, ""), `${where} (invisible characters removed)`);
}

/** A command line printing the vault value ATK_V in 5-character pieces with `sep` between them. */
const pieces = (sep: string) =>
  `printf '%s${sep}%s${sep}%s\\n' "\${ATK_V:0:5}" "\${ATK_V:5:5}" "\${ATK_V:10:5}"`;

/**
 * A real run with ATK_V in the vault and the test MCP server (`t`, MCP_VALUE in its env):
 * the model runs one command printing ATK_V in pieces joined by each of `separators`, calls
 * `mcp__t__<tool>`, then answers. `body` checks the model's requests; then `check` finds no
 * piece of a secret in the trace, the run's output, `trace export` and `trace show`, and every
 * export holds the vault marker.
 */
async function withSplitRun(
  separators: string[],
  tool: string,
  check: (text: string, where: string) => void,
  body: (server: ModelServer) => void,
): Promise<void> {
  await cacheServers();
  const queue: ScriptedTurn[] = [];
  await withModelRoot({ handler: () => queue.shift(), maxRequests: 10 }, async (sb, server) => {
    const config = await initDefaultAgent(sb.root);
    await setVault(sb.root, "ATK_V", VAULT_VALUE);
    const deno = denoServer(TEST_SERVER);
    await addMcpServer(config, "t", { ...deno, env: { ...deno.env, LISTED_SECRET: MCP_VALUE } });
    queue.push(
      turn.toolCall("exec_command", { cmd: separators.map(pieces).join("; ") }),
      turn.toolCall(`mcp__t__${tool}`, {}),
      turn.text("Seen."),
    );
    const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"]);
    assert.equal(r.code, 0, r.stderr);
    const sid = /^Session: (session-\S+)$/m.exec(r.stderr)?.[1];
    assert.ok(sid, r.stderr);
    assert.equal(server.requests.length, 3);
    body(server);
    const agent = join(sb.root, DEFAULT_PROJECT_ID, "agents", DEFAULT_AGENT_ID);
    check(await readAll(join(agent, "traces")), "a trace file");
    check(r.stdout + r.stderr, "the run's output");
    for (const v of await traceViews(sb.root, sid, ["md", "html", "json"])) {
      if (v.format) assert.ok(v.stdout.includes("[redacted:vault:ATK_V]"), `export ${v.format}`);
      check(v.text, v.where);
    }
  }, { visible: true });
}

Deno.test("run: a secret split by escape sequences, and one in an MCP server's tool list, is masked everywhere", async () => {
  const separators = ["\\033[0m", "\\033]0;\\007", "\\302\\233" + "0m", "\\033Pq\\033\\\\"];
  await withSplitRun(separators, "split", assertNoPiece, (server) => {
    const bodies = JSON.stringify(server.requests.map((q) => safeStrings(q.body)));
    assert.ok(bodies.includes("[redacted:vault:ATK_V]"), bodies.slice(-3000));
    assert.ok(bodies.includes("[redacted:mcp:t.LISTED_SECRET]"), "the split MCP output is masked");
    // The listed tool is offered with its description, title and schema masked; the tool whose
    // name held a piece of the value is left out.
    assert.ok(bodies.includes("mcp__t__keyed"), "the keyed tool is offered");
    assert.ok(
      bodies.includes(
        "Uses key [redacted:mcp:t.LISTED_SECRET] (prefix [redacted:mcp:t.LISTED_SECRET])",
      ),
    );
    assert.ok(bodies.includes("default [redacted:mcp:t.LISTED_SECRET]"), "the schema is masked");
    assert.ok(!bodies.includes("mcp__t__leak_"), "a name holding a secret is not offered");
    assertNoPiece(bodies, "a request body");
  });
});

Deno.test("run: another data root penguin has used is hidden from the model's commands", async () => {
  const other = await makeRoot(await startModelServer({ turns: [] }), { visible: true });
  const server = await startModelServer({
    turns: [
      turn.toolCall("exec_command", {
        cmd:
          `cat ${other.root}/default_project/agents/default_agent/agent_state/.vault.toml | rev; ` +
          `ls -a ${other.root} | tr a-z A-Z`,
      }),
      turn.text("Seen."),
    ],
  });
  const sb = await makeRoot(server, { visible: true });
  try {
    // Root A is only configured (its vault set), never run.
    await setVault(other.root, "OTHER", VAULT_VALUE);
    const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"]);
    assert.equal(r.code, 0, r.stderr);
    const bodies = JSON.stringify(server.requests.map((q) => q.body));
    const reversed = [...VAULT_VALUE].reverse().join("");
    assert.ok(!bodies.includes(reversed.slice(0, 8)), "the other root's vault reached the model");
    assert.ok(!bodies.includes("DEFAULT_PROJECT"), "the other root's listing reached the model");
    assert.ok(
      bodies.includes(".vault.toml: No such file or directory"),
      "the other root is hidden",
    );
  } finally {
    await server.close();
    await sb.cleanup();
    await other.cleanup();
  }
});

Deno.test("run: a secret split by invisible characters (bidi marks, tag characters, variation selectors…) is masked everywhere", async () => {
  // LRM, RLM, combining grapheme joiner, Arabic letter mark, variation selector 16, tag
  // LATIN CAPITAL A, soft hyphen, function application: each drawn as nothing.
  const separators = [
    "\\342\\200\\216",
    "\\342\\200\\217",
    "\\315\\217",
    "\\330\\234",
    "\\357\\270\\217",
    "\\363\\240\\201\\201",
    "\\302\\255",
    "\\342\\201\\241",
  ];
  await withSplitRun(separators, "hidden_split", assertNoHiddenPiece, (server) => {
    const bodies = JSON.stringify(server.requests.map((q) => q.body));
    assert.ok(bodies.includes("[redacted:vault:ATK_V]"), bodies.slice(-3000));
    assert.ok(bodies.includes("[redacted:mcp:t.LISTED_SECRET]"), "the MCP output is masked");
    assert.ok(bodies.includes("mcp__t__hidden_split"), "the tool is offered");
    assert.ok(
      bodies.includes("Pieces [redacted:mcp:t.LISTED_SECRET]"),
      "its description is masked",
    );
    assertNoHiddenPiece(bodies, "a request body");
  });
});
