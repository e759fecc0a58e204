// `penguin agent snapshot` never packs a secret value penguin knows (attack final13 rows 28, 29):
// the model writes the agent's memory, so a vault value or API key written there is masked in
// every text file, a binary file or a name holding one is left out; the telemetry header values
// and endpoint credentials of system_config.yaml are emptied. An import of the snapshot still
// restores everything else.
import assert from "node:assert/strict";
import { join } from "node:path";
import { readTar } from "../../lib/state/_tar.ts";
import { runCli, runCliOk } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";
import { assertNoPieceOf, setVault } from "../support/secrets.ts";

const VAULT = "Qz7Kp2Xw9Lm4Rt6Yh8Nb3Vc5Jd1Fg0Ss";
const INLINE_KEY = "sk-inline-Hq4Wz8Lp2Rt6Nm0Xc";
const ENV_KEY = "sk-env-Bv3Yk7Jd1Gs5Pf9Tw";

const agentDir = (root: string, agent = "default_agent") =>
  join(root, "default_project", "agents", agent);
const stateDir = (root: string, agent = "default_agent") =>
  join(agentDir(root, agent), "agent_state");

/** Every entry of the agent's one snapshot: its name and bytes. */
async function packed(root: string): Promise<{ path: string; data: Uint8Array }[]> {
  const dir = join(agentDir(root), "snapshots");
  const [snap] = (await Array.fromAsync(Deno.readDir(dir))).map((e) => join(dir, e.name));
  const stream = (await Deno.open(snap!)).readable.pipeThrough(new DecompressionStream("gzip"));
  return readTar(new Uint8Array(await new Response(stream).arrayBuffer()));
}

/** Every name and content of `entries`, read as UTF-8 and as Latin-1. */
function allText(entries: { path: string; data: Uint8Array }[]): string {
  return entries.map((e) =>
    [
      e.path,
      new TextDecoder().decode(e.data),
      new TextDecoder("latin1").decode(e.data),
    ].join("\n")
  ).join("\n");
}

const snapshotFile = async (root: string) =>
  join(
    agentDir(root),
    "snapshots",
    (await Array.fromAsync(Deno.readDir(join(agentDir(root), "snapshots"))))[0]!.name,
  );

Deno.test("agent snapshot masks every known secret in the files packed, leaves out binary files and names holding one; import restores the rest", async () => {
  await withRoot(async (root) => {
    await runCliOk(["--root", root, "skills", "list"]);
    await setVault(root, "ATK_V", VAULT);
    await Deno.writeTextFile(
      join(root, "default_project", ".project_config.toml"),
      `[[models]]\nprovider = "custom"\nmodel_id = "m"\nbase_url = "http://127.0.0.1:9/v1"\n` +
        `client_type = "openai-chat"\napi_key = "${INLINE_KEY}"\n`,
    );
    const state = stateDir(root);
    const escaped = [...VAULT].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
      .join("");
    await Deno.writeTextFile(
      join(state, "memory", "user", "MEMORY.md"),
      `# Memory\nkeep this line\nM1:${VAULT}\npiece:${VAULT.slice(5, 19)}\n` +
        `json:${JSON.stringify({ v: VAULT })}\nescaped:"${escaped}"\n`,
    );
    await Deno.writeTextFile(
      join(state, "memory", "user", "keys.md"),
      `inline ${INLINE_KEY}\nenv ${ENV_KEY}\n`,
    );
    await Deno.writeTextFile(join(state, "memory", "user", `note-${VAULT}.md`), "plain");
    const secretBinary = new Uint8Array([0xff, 0xfe, 0, ...new TextEncoder().encode(VAULT), 0x80]);
    await Deno.writeFile(join(state, "memory", "user", "blob.bin"), secretBinary);
    const plainBinary = new Uint8Array([0xff, 0xfe, 0, 1, 2, 0x80, 0x81]);
    await Deno.writeFile(join(state, "memory", "user", "plain.bin"), plainBinary);

    const r = await runCliOk(["--root", root, "agent", "snapshot"], {
      env: { OPENAI_API_KEY: ENV_KEY },
    });
    assert.match(
      r.stderr,
      /packed agent_state\/memory\/user\/MEMORY\.md: secret values masked \(written as \[redacted:vault:ATK_V\]\)/,
    );
    assert.match(r.stderr, /memory\/user\/blob\.bin: a binary file holding a secret value/);
    assert.match(r.stderr, /note-\[redacted:vault:ATK_V\]\.md: its name holds a secret value/);
    assertNoPieceOf(r.stdout + r.stderr, [VAULT], "the snapshot's report");

    const entries = await packed(root);
    const all = allText(entries);
    assertNoPieceOf(all, [VAULT, INLINE_KEY, ENV_KEY], "the snapshot");
    assert.ok(!all.includes(btoa(VAULT).slice(0, 16)), "the vault value base64-encoded");
    assert.ok(!all.toLowerCase().includes(escaped.slice(0, 36).toLowerCase()), "escaped value");
    const byPath = new Map(entries.map((e) => [e.path, e.data]));
    assert.ok(!byPath.has("agent_state/memory/user/blob.bin"));
    assert.deepEqual(byPath.get("agent_state/memory/user/plain.bin"), plainBinary);
    const memory = new TextDecoder().decode(byPath.get("agent_state/memory/user/MEMORY.md"));
    assert.match(memory, /^keep this line$/m);
    assert.match(memory, /^M1:\[redacted:vault:ATK_V\]$/m);
    const keys = new TextDecoder().decode(byPath.get("agent_state/memory/user/keys.md"));
    assert.equal(keys, "inline [redacted:api_key:custom]\nenv [redacted:api_key:OPENAI_API_KEY]\n");

    await runCliOk([
      "--root",
      root,
      "agent",
      "import",
      await snapshotFile(root),
      "--agent-id",
      "copy",
      "--yes",
    ]);
    const copy = await Deno.readTextFile(
      join(stateDir(root, "copy"), "memory", "user", "MEMORY.md"),
    );
    assert.equal(copy, memory);
    assert.deepEqual(
      await Deno.readFile(join(stateDir(root, "copy"), "memory", "user", "plain.bin")),
      plainBinary,
    );
  });
});

const TELEMETRY = [
  "PASSWORD123456",
  "SECRETPATH123",
  "QUERYTOKEN123",
  "COLLECTORTOKEN1234567",
  "TRACESPATHTOKEN99",
] as const;

Deno.test("agent snapshot empties telemetry header values and cuts its endpoints to scheme://host:port; import keeps the rest", async () => {
  await withRoot(async (root) => {
    await runCliOk(["--root", root, "skills", "list"]);
    const config = join(stateDir(root), "system_config.yaml");
    const text = await Deno.readTextFile(config);
    await Deno.writeTextFile(
      config,
      text.replace(
        /^version:/m,
        "telemetry:\n  otlp:\n" +
          `    endpoint: https://user:${TELEMETRY[0]}@collector.example:4318/v1/${TELEMETRY[1]}?k=${
            TELEMETRY[2]
          }\n` +
          `    traces_endpoint: "https://traces.example/${TELEMETRY[4]}/v1/traces"\n` +
          `    headers:\n      Authorization: Bearer ${TELEMETRY[3]}\n      X-Team: blue\n` +
          "version:",
      ),
    );
    const r = await runCliOk(["--root", root, "agent", "snapshot"]);
    assert.match(
      r.stderr,
      /telemetry credentials left out .*telemetry\.otlp\.headers\.Authorization, telemetry\.otlp\.headers\.X-Team, telemetry\.otlp\.endpoint\.user/,
    );
    const entries = await packed(root);
    assertNoPieceOf(allText(entries), [...TELEMETRY], "the snapshot");
    const yaml = new TextDecoder().decode(
      entries.find((e) => e.path === "agent_state/system_config.yaml")!.data,
    );
    assert.match(yaml, /^ {4}endpoint: https:\/\/collector\.example:4318 # penguin: /m);
    assert.match(yaml, /^ {4}traces_endpoint: "https:\/\/traces\.example" # penguin: /m);
    assert.match(yaml, /^ {6}Authorization: ""$/m);
    assert.match(yaml, /^ {6}X-Team: ""$/m);

    await runCliOk([
      "--root",
      root,
      "agent",
      "import",
      await snapshotFile(root),
      "--agent-id",
      "copy",
      "--yes",
    ]);
    const copy = await Deno.readTextFile(join(stateDir(root, "copy"), "system_config.yaml"));
    assert.equal(copy, yaml);
  });
});

Deno.test("agent snapshot refuses a system_config.yaml that masking a secret would break", async () => {
  await withRoot(async (root) => {
    await runCliOk(["--root", root, "skills", "list"]);
    await setVault(root, "ATK_V", VAULT);
    const config = join(stateDir(root), "system_config.yaml");
    const text = await Deno.readTextFile(config);
    await Deno.writeTextFile(config, text.replace(/^name: .*$/m, `name: ${VAULT}`));
    const r = await runCli(["--root", root, "agent", "snapshot"]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Cannot snapshot ".*system_config\.yaml": it holds a secret value/);
    assertNoPieceOf(r.stdout + r.stderr, [VAULT], "the refusal");
    assert.deepEqual(
      await Array.fromAsync(Deno.readDir(agentDir(root))).then((e) =>
        e.some((x) => x.name === "snapshots" && x.isDirectory)
      ),
      false,
    );
  });
});

/**
 * Each of `edits` made to a new root's system_config.yaml: `agent snapshot` fails with `refusal`
 * on stderr, writes no snapshot, and its output passes `unseen` (no credential in it).
 */
async function assertEditsRefused(
  edits: ((text: string) => string)[],
  refusal: RegExp,
  unseen: (output: string) => void,
): Promise<void> {
  for (const edit of edits) {
    await withRoot(async (root) => {
      await runCliOk(["--root", root, "skills", "list"]);
      const config = join(stateDir(root), "system_config.yaml");
      await Deno.writeTextFile(config, edit(await Deno.readTextFile(config)));
      const r = await runCli(["--root", root, "agent", "snapshot"]);
      assert.notEqual(r.code, 0, r.stderr);
      assert.match(r.stderr, refusal);
      unseen(r.stdout + r.stderr);
      const made = await Array.fromAsync(Deno.readDir(agentDir(root)));
      assert.ok(!made.some((x) => x.name === "snapshots"), "no snapshot written");
    });
  }
}

Deno.test("agent snapshot refuses a system_config.yaml whose credentials an alias could hide (final13c rows 50, 57)", async () => {
  const edits: ((text: string) => string)[] = [
    // The whole telemetry section through an alias: penguin's telemetry reads it all the same.
    (text) =>
      text.replace(
        /^version:/m,
        `x-shared: &t\n  otlp:\n    endpoint: https://u:${TELEMETRY[0]}@c.example/v1\n` +
          `    headers:\n      Authorization: Bearer ${TELEMETRY[3]}\ntelemetry: *t\nversion:`,
      ),
    // The MCP servers, a URL and a header inside.
    (text) =>
      text.replace(
        /^version:/m,
        `x-servers: &m\n  - name: api\n    config:\n` +
          `      url: https://u:${TELEMETRY[1]}@mcp.example/mcp?k=${TELEMETRY[2]}\n` +
          `      headers:\n        X-K: ${TELEMETRY[4]}\nversion:`,
      ).replace(/^ {2}mcpServers:.*$/m, "  mcpServers: *m"),
  ];
  await assertEditsRefused(
    edits,
    /Cannot snapshot ".*system_config\.yaml": line \d+ uses the YAML alias \*[tm],/,
    (output) => assertNoPieceOf(output, [...TELEMETRY], "the refusal"),
  );
});

Deno.test("agent snapshot refuses a system_config.yaml that brings credentials in through a YAML merge key (final16 rows 33, 35, 36)", async () => {
  // Short values: too short for the masker, so only the refusal keeps them out.
  const short = ["hk12", "ek34", "pw56", "tk78"];
  const edits: ((text: string) => string)[] = [
    // %YAML 1.1 applies `<<`: the server really gets the header (penguin's loader merges it).
    (text) =>
      `%YAML 1.1\n---\n` +
      text.replace(
        /^ {2}mcpServers:.*$/m,
        `  mcpServers:\n    - name: hdr\n      config:\n        url: https://mcp.example/\n` +
          `        <<: {headers: {X-Api-Key: ${short[0]}}}\n    - name: envs\n` +
          `      config:\n        command: /bin/true\n        <<: {env: {API_TOKEN: ${short[1]}}}`,
      ),
    // A whole telemetry section merged in at the top level.
    (text) =>
      `%YAML 1.1\n---\n` +
      text.replace(
        /^version:/m,
        `<<: {telemetry: {otlp: {endpoint: "https://u:${short[2]}@c.example/v1", ` +
          `headers: {Authorization: "Bearer ${short[3]}"}}}}\nversion:`,
      ),
  ];
  await assertEditsRefused(
    edits,
    /Cannot snapshot ".*system_config\.yaml": line \d+ uses the YAML merge key <<,/,
    (output) => {
      for (const v of short) assert.ok(!output.includes(v), `${v} shown`);
    },
  );
});
