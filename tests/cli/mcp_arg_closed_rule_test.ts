// A stdio MCP server's arguments under the closed rule (issue 26 item 5, red team final8 P18–P27,
// P40): an argument is no secret only when it is an option name or a path that exists. Each token
// shape a judgement by shape let through (a bare 24-letter word, a comma list, dash-joined pieces,
// a path that does not exist, a relative path, a header value, a package spec, a capitalized word,
// `//host/<tok>`, `host/<tok>`) is added with a real `mcp add`: `agent snapshot` packs no piece of
// it, `mcp list` elides it, and masking covers it. Option names and existing paths are still
// packed and shown. The setup line `agent import` prints quotes every word, so a hostile
// snapshot's server name runs nothing when pasted into a shell.
import assert from "node:assert/strict";
import { join } from "node:path";
import { packTar } from "modern-tar";
import { mcpSecrets } from "../../lib/mcp/secrets.ts";
import { maskSecrets } from "../../lib/tools/secret_mask.ts";
import { runCliOk } from "../support/cli.ts";
import { packedText } from "./_mcp_snapshot.ts";
import { withRoot } from "../support/roots.ts";

/** [server, its arguments after `npx -y`, the token pieces none of which may be packed or shown]. */
const SHAPES: [string, string[], string[]][] = [
  ["p18", ["some-server", "qzxkvbnmwrtplhjgfdsyczzk"], ["qzxkvbnmwrtplhjgfdsyczzk"]],
  ["p19", ["--only=bcdfghjklmnpqrstvwxzbcdb,zkqxwvbnmlkjhgfdsrtpycvb"], [
    "bcdfghjklmnpqrstvwxzbcdb",
    "zkqxwvbnmlkjhgfdsrtpycvb",
  ]],
  ["p20", ["--profile=bcdfgh-jklmnp-qrstvw-xzbcdc"], ["bcdfgh", "jklmnp", "qrstvw", "xzbcdc"]],
  ["p21", ["--config=/srv/mcp/wrtplhjgfdsyczzkqzxkvbnd/cfg.json"], ["wrtplhjgfdsyczzkqzxkvbnd"]],
  ["p22", ["--dir=data/plhjgfdsyczzkqzxkvbnmwre"], ["plhjgfdsyczzkqzxkvbnmwre"]],
  ["p23", [
    "mcp-remote",
    "https://mcp.example.com",
    "--header",
    "X-Team-Id: hjgfdsyczzkqzxkvbnmwrtpf",
  ], [
    "hjgfdsyczzkqzxkvbnmwrtpf",
  ]],
  ["p24", ["@zkqzxkvbnmwrtplg/jgfdsyczzkqzxkvg"], ["zkqzxkvbnmwrtplg", "jgfdsyczzkqzxkvg"]],
  ["p25", ["some-server", "Qzxkvbnmwrtplhjh"], ["Qzxkvbnmwrtplhjh"]],
  ["p26", ["mcp-remote", "//mcp.example.com/Tk26zxkvbnmwrtpl/sse"], ["Tk26zxkvbnmwrtpl"]],
  ["p27", ["mcp-remote", "mcp.example.com/Tk27zxkvbnmwrtpl/sse"], ["Tk27zxkvbnmwrtpl"]],
];

Deno.test("agent snapshot packs no piece of a stdio MCP argument that is no option name or existing path; mcp list elides it", async () => {
  await withRoot(async (root) => {
    const existing = join(root, "server-config.json");
    await Deno.writeTextFile(existing, "{}");
    for (const [name, args] of SHAPES) {
      await runCliOk(["--root", root, "mcp", "add", name, "--no-test", "--", "npx", "-y", ...args]);
    }
    await runCliOk([
      "--root",
      root,
      "mcp",
      "add",
      "keep",
      "--no-test",
      "--",
      "node",
      existing,
      "--verbose",
      "--log-level",
      `--config=${existing}`,
      "-y",
    ]);
    const snap = await runCliOk(["--root", root, "agent", "snapshot"]);
    for (const w of ["p18.args[2]", "p19.args[1]", "p23.args[4]", "p26.args[2]", "p27.args[2]"]) {
      assert.ok(snap.stderr.includes(w), `${w} not named: ${snap.stderr}`);
    }
    assert.ok(!/\bkeep\.args/.test(snap.stderr), `keep's arguments named: ${snap.stderr}`);
    const { all, config } = await packedText(root);
    for (const [name, , pieces] of SHAPES) {
      for (const p of pieces) assert.ok(!all.includes(p), `${name}: ${p} is in the snapshot`);
    }
    for (
      const kept of [
        "- --only= # penguin: argument left out",
        "- --profile= #",
        `- "X-Team-Id:" #`,
        "- --header\n",
        `- ${existing}\n`,
        `- --config=${existing}\n`,
        "- --verbose\n",
        "- --log-level\n",
        "- -y\n",
      ]
    ) assert.ok(config.includes(kept), `${JSON.stringify(kept)} not packed:\n${config}`);

    const list = await runCliOk(["--root", root, "mcp", "list"]);
    const shown = list.stdout + list.stderr;
    for (const [name, , pieces] of SHAPES) {
      for (const p of pieces) assert.ok(!shown.includes(p), `${name}: mcp list shows ${p}`);
    }
    assert.match(shown, /p18 {2}stdio {2}npx -y … …\n/);
    assert.match(shown, /p19 {2}stdio {2}npx -y --only=…\n/);
    assert.match(
      shown,
      /p23 {2}stdio {2}npx -y … https:\/\/mcp\.example\.com --header X-Team-Id: …\n/,
    );
    assert.ok(
      shown.includes(`keep  stdio  node ${existing} --verbose --log-level --config=${existing} -y`),
      shown,
    );
  });
});

Deno.test("a stdio MCP argument of 12 characters or more is masked in text; a shorter one only after a credential option", () => {
  const secrets = mcpSecrets(
    SHAPES.map(([name, args]) => ({
      name,
      transport: "stdio",
      command: "npx",
      args: ["-y", ...args, "--token", "hunter2"],
      env: {},
    })) as unknown as Parameters<typeof mcpSecrets>[0],
  );
  for (const [name, , pieces] of SHAPES.filter(([name]) => name !== "p24")) {
    const text = maskSecrets(`got ${pieces.join(" ")} back`, secrets);
    for (const p of pieces.filter((p) => p.length >= 12)) {
      assert.ok(!text.includes(p), `${name}: ${text}`);
    }
  }
  assert.match(maskSecrets("pw hunter2", secrets), /^pw \[redacted:mcp:p\d+\.args\[\d+\]\]$/);
  assert.equal(maskSecrets("run some-server -y", secrets), "run some-server -y");
  // The package a runner starts (`npx -y <pkg>`, P24) is left out and elided, not masked: its
  // pieces (`protocol`, `filesystem`) would be masked in every text, tool names included.
  const p24 = mcpSecrets(
    [{
      name: "p24",
      transport: "stdio",
      command: "npx",
      args: ["-y", "@zkqzxkvbnmwrtplg/jgfdsyczzkqzxkvg"],
      env: {},
    }] as unknown as Parameters<typeof mcpSecrets>[0],
  );
  assert.deepEqual(p24, []);
  const pw = mcpSecrets(
    [{
      name: "pw",
      transport: "stdio",
      command: "/usr/bin/npx",
      args: ["-p", "LongPwTok3nValue99", "server"],
      env: {},
    }] as unknown as Parameters<typeof mcpSecrets>[0],
  );
  assert.equal(maskSecrets("LongPwTok3nValue99", pw), "[redacted:mcp:pw.args[1]]");
});

Deno.test("agent import of a hostile snapshot prints setup lines with every word shell-quoted", async () => {
  await withRoot(async (root) => {
    const pwned = join(root, "PWNED");
    const config = [
      "name: Helpful",
      "version: 1",
      `system_prompt: "You are helpful."`,
      "tools:",
      "  mcpServers:",
      `    - name: "x;touch ${pwned};:"`,
      "      config:",
      `        url: https://mcp.example.com # penguin: userinfo, path, query and fragment left out; set the full URL`,
      "        headers:",
      `          "K';touch ${pwned};'": ""`,
      `    - name: "y$(touch ${pwned})"`,
      "      config:",
      `        command: "npx;touch ${pwned}"`,
      "        args:",
      "          - -y",
      `          - "" # penguin: argument left out; set it again`,
      `          - "--a=$(touch ${pwned})" # penguin: argument left out; set it again`,
      "",
    ].join("\n");
    const body = new TextEncoder().encode(config);
    const tar = await packTar([{
      header: {
        name: "agent_state/system_config.yaml",
        size: body.length,
        type: "file",
        mode: 0o644,
      },
      body,
    }]);
    const path = join(root, "evil.tar.gz");
    const gz = new Blob([tar as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
    await Deno.writeFile(path, new Uint8Array(await new Response(gz).arrayBuffer()));
    const other = join(root, "other");
    const imp = await runCliOk(["--root", other, "agent", "import", path, "--yes"]);
    const lines = imp.stdout.split("\n").filter((l) => l.startsWith("  penguin mcp add "));
    assert.deepEqual(lines, [
      `  penguin mcp add 'x;touch ${pwned};:' --url 'https://mcp.example.com/…' ` +
      `--header 'K'\\'';touch ${pwned};'\\'': …'`,
      `  penguin mcp add 'y$(touch ${pwned})' -- 'npx;touch ${pwned}' '-y' '…' ` +
      `'--a=$(touch ${pwned})…'`,
    ]);
    const sh = new Deno.Command("bash", {
      args: ["-c", `penguin() { :; }\n${lines.join("\n")}`],
      stdout: "null",
      stderr: "piped",
    });
    const r = await sh.output();
    assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
    assert.equal(await Deno.stat(pwned).catch(() => null), null, "a pasted line ran a command");
  });
});
