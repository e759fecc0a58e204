// penguin.jsonc: parsing with line:column errors, and the narrowing rule of the merge.
import assert from "node:assert/strict";
import { join } from "node:path";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { APPROVAL_MODES } from "../../lib/agent/approval.ts";
import {
  applyWorkspacePolicy,
  type EffectivePolicy,
  loadWorkspacePolicy,
  POLICY_APPROVAL_MODES,
  type PolicyFlags,
  type PolicyTrust,
  wideningSettings,
  WORKSPACE_POLICY_FILE,
} from "../../lib/sandbox/workspace_policy.ts";
import { parseWorkspacePolicyText } from "../../lib/sandbox/_workspace_policy_parse.ts";
import { sha256Hex } from "../../lib/state/trust.ts";

function parseError(text: string): string {
  try {
    parseWorkspacePolicyText(text, "/ws/penguin.jsonc");
  } catch (err) {
    assert.ok(err instanceof PenguinError);
    assert.equal(err.kind, "config");
    return err.message;
  }
  assert.fail(`expected ${JSON.stringify(text)} to be refused`);
}

async function withWs(fn: (ws: string, outside: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "penguin-wspol-" }));
  try {
    await Deno.mkdir(join(dir, "ws"));
    await Deno.mkdir(join(dir, "outside"));
    await fn(join(dir, "ws"), join(dir, "outside"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function effective(
  ws: string,
  text: string,
  flags: Partial<PolicyFlags> = {},
  protectedPaths: string[] = [],
  trust: PolicyTrust = "untrusted",
): Promise<EffectivePolicy> {
  await Deno.writeTextFile(join(ws, WORKSPACE_POLICY_FILE), text);
  const policy = await loadWorkspacePolicy(ws, { protectedPaths });
  return applyWorkspacePolicy(
    {
      sandbox: "workspace-write",
      network: false,
      approve: "allow-all",
      ...flags,
    },
    policy,
    trust,
  );
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof PenguinError, String(err));
    assert.equal(err.exitCode, 2);
    return err.message;
  }
  assert.fail("expected a refusal");
}

Deno.test("the file's approval modes are exactly the agent's approval modes", () => {
  assert.deepEqual([...POLICY_APPROVAL_MODES].sort(), [...APPROVAL_MODES].sort());
});

Deno.test("penguin.jsonc accepts comments, trailing commas and every setting", () => {
  const { value } = parseWorkspacePolicyText(
    `// project policy
{
  "$schema": "https://example.invalid/penguin.schema.json",
  "sandbox": "read-only", /* inline */
  "network": { "allow": ["registry.npmjs.org", "*.github.com:443", "10.0.0.1"] },
  "writable_roots": ["../cache"],
  "command_rules": [{ "name": "no-curl", "pattern": "\\\\bcurl\\\\b", "description": "no downloads" }],
  "approval": "always-ask",
}
`,
    "/ws/penguin.jsonc",
  );
  assert.equal(value.sandbox, "read-only");
  assert.deepEqual(value.network, {
    allow: ["registry.npmjs.org", "*.github.com:443", "10.0.0.1"],
  });
  assert.deepEqual(value.writable_roots, ["../cache"]);
  assert.equal(value.command_rules?.[0]?.pattern, "\\bcurl\\b");
  assert.equal(value.approval, "always-ask");
});

Deno.test("an empty or comment-only penguin.jsonc has no settings", () => {
  assert.deepEqual(parseWorkspacePolicyText("  // nothing yet\n", "/ws/penguin.jsonc").value, {});
});

Deno.test("penguin.jsonc errors point at the line and column of the problem", () => {
  const cases: [string, RegExp][] = [
    [
      '{\n  "sandbox": "read-only",\n  "netwrk": "off"\n}',
      /line 3, column 3: netwrk: unknown setting \(known settings: sandbox, network, writable_roots, home_readable, command_rules, approval, git, mcp\)$/,
    ],
    [
      '{\n  "sandbox": "off"\n}',
      /line 2, column 14: sandbox: expected "workspace-write" or "read-only" \("off" can only be chosen on the command line, with --sandbox off\), found "off"$/,
    ],
    [
      '{ "network": "maybe" }',
      /line 1, column 14: network: expected "on", "off" or \{"allow": \["host", \.\.\.\]\}/,
    ],
    [
      '{ "network": { "allow": ["ok.example", "bad host!"] } }',
      /line 1, column 40: network\.allow\[1\]: expected a host name, \*\.domain or IP address/,
    ],
    [
      '{ "network": { "allow": [] } }',
      /line 1, column 25: network\.allow: expected at least one host/,
    ],
    [
      '{ "network": { "allow": ["a.b"], "deny": [] } }',
      /line 1, column 34: network\.deny: unknown setting$/,
    ],
    [
      '{\n\n  "approval": "yolo"\n}',
      /line 3, column 15: approval: expected one of "allow-all", "read-only", "always-ask", "deny-all", found "yolo"/,
    ],
    [
      '{ "command_rules": [{ "name": "x", "pattern": "(" }] }',
      /line 1, column 47: command_rules\[0\]\.pattern: not a valid regular expression/,
    ],
    [
      '{ "command_rules": [{ "name": "x" }] }',
      /line 1, column 21: command_rules\[0\]\.pattern: expected a string, found nothing/,
    ],
    [
      '{ "writable_roots": "/tmp" }',
      /line 1, column 21: writable_roots: expected an array, found "\/tmp"/,
    ],
    [
      '{\n  "sandbox": "read-only",\n  "sandbox": "workspace-write"\n}',
      /line 3, column 3: sandbox: written twice$/,
    ],
    ['{ "sandbox": "read-only" ', /syntax error: close brace expected/],
    ['{ "sandbox": read-only }', /line 1, column 14: syntax error: invalid symbol/],
    ['["read-only"]', /line 1, column 1: expected an object, found an array/],
    ['{ "__proto__": { "sandbox": "off" } }', /__proto__: unknown setting/],
  ];
  for (const [text, re] of cases) {
    const msg = parseError(text);
    assert.match(msg, /^Invalid "\/ws\/penguin\.jsonc": /, text);
    assert.match(msg, re, text);
  }
});

Deno.test("no penguin.jsonc leaves the flags as they are", async () => {
  await withWs(async (ws) => {
    const flags: PolicyFlags = { sandbox: "off", network: true, approve: "allow-all" };
    assert.equal(await loadWorkspacePolicy(ws), undefined);
    assert.deepEqual(applyWorkspacePolicy(flags, undefined), {
      sandbox: "off",
      network: true,
      approve: "allow-all",
      extraWritable: [],
      homeReadable: [],
      git: "read-only",
      commandRules: [],
      mcpDeny: [],
      notes: [],
    });
    assert.equal(applyWorkspacePolicy({ ...flags, gitWritable: true }, undefined).git, "writable");
  });
});

Deno.test('"git": "writable" applies only from a trusted file; "read-only" always narrows --git-writable', async () => {
  await withWs(async (ws) => {
    const text = '{\n  "git": "writable"\n}';
    const ignored = await effective(ws, text);
    assert.equal(ignored.git, "read-only");
    assert.equal(ignored.notes.length, 1);
    assert.match(
      ignored.notes[0]!,
      /^warning: .*\/penguin\.jsonc: line 2, column 10: "git": "writable" is ignored \(commands may commit.*not trusted.*`penguin trust .*penguin\.jsonc` reviews it and enables it$/,
    );
    const changed = await effective(ws, text, {}, [], "changed");
    assert.equal(changed.git, "read-only");
    assert.match(
      changed.notes[0]!,
      /penguin\.jsonc changed since you trusted it; run penguin trust/,
    );
    const opened = await effective(ws, text, {}, [], "trusted");
    assert.equal(opened.git, "writable");
    assert.match(
      opened.notes.join("\n"),
      /\(trusted\): commands may commit.*config, hooks and redirections stay read-only/,
    );
    const kept = await effective(ws, '{ "git": "read-only" }', { gitWritable: true });
    assert.equal(kept.git, "read-only");
    assert.match(kept.notes.join("\n"), /narrower than --git-writable/);
    const same = await effective(ws, '{ "git": "writable" }', { gitWritable: true });
    assert.deepEqual([same.git, same.notes], ["writable", []]);
    assert.equal((await effective(ws, "{}", { gitWritable: true })).git, "writable");
    assert.match(
      await refusal(effective(ws, '{\n  "git": "rw"\n}')),
      /line 2, column 10: git: expected "read-only" or "writable"/,
    );
  });
});

Deno.test("the file narrows sandbox, network and approval, and never widens them", async () => {
  await withWs(async (ws) => {
    // Narrowing: applied, with a note.
    let e = await effective(
      ws,
      '{ "sandbox": "read-only", "network": "off", "approval": "deny-all" }',
      {
        sandbox: "workspace-write",
        network: true,
        approve: "read-only",
      },
    );
    assert.equal(e.sandbox, "read-only");
    assert.equal(e.network, false);
    assert.equal(e.approve, "deny-all");
    assert.equal(e.notes.length, 3);
    // --sandbox off is narrowed too.
    e = await effective(ws, '{ "sandbox": "workspace-write" }', { sandbox: "off" });
    assert.equal(e.sandbox, "workspace-write");
    // Wider settings in the file change nothing.
    e = await effective(ws, '{ "sandbox": "workspace-write", "approval": "allow-all" }', {
      sandbox: "read-only",
      approve: "always-ask",
    });
    assert.equal(e.sandbox, "read-only");
    assert.equal(e.approve, "always-ask");
    assert.deepEqual(e.notes, []);
    // An untrusted "network": "on" cannot turn on what --network off keeps off; a trusted one can.
    e = await effective(ws, '{ "network": "on" }', { network: false });
    assert.equal(e.network, false);
    assert.match(e.notes[0]!, /line 1, column 14: "network": "on" is ignored .*penguin trust/);
    e = await effective(ws, '{ "network": "on" }', { network: false }, [], "trusted");
    assert.equal(e.network, true);
    assert.match(e.notes[0]!, /\(trusted\): commands may use the network/);
    // A command without approval (sandbox run) keeps none.
    e = await effective(ws, '{ "approval": "deny-all" }', { approve: undefined });
    assert.equal(e.approve, undefined);
  });
});

Deno.test("a network allowlist applies as off with --network off and is refused with --network on", async () => {
  await withWs(async (ws) => {
    const text = '{\n  "network": { "allow": ["registry.npmjs.org"] }\n}';
    const off = await effective(ws, text, { network: false });
    assert.equal(off.network, false);
    assert.match(off.notes[0]!, /allowlist applies as "off"/);
    const msg = await refusal(effective(ws, text, { network: true }));
    assert.match(
      msg,
      /^Cannot apply ".*penguin\.jsonc": line 2, column 14: network\.allow: a network allowlist \(registry\.npmjs\.org\) cannot be enforced/,
    );
    assert.match(msg, /set "network": "off" in penguin\.jsonc, or remove the setting/);
  });
});

Deno.test("keeping commands off the network with --sandbox off is refused, not ignored", async () => {
  await withWs(async (ws) => {
    const msg = await refusal(effective(ws, '{ "network": "off" }', { sandbox: "off" }));
    assert.match(msg, /takes the OS sandbox, and --sandbox off runs them without one/);
    // With the file also narrowing the sandbox, it can be enforced.
    const e = await effective(ws, '{ "network": "off", "sandbox": "read-only" }', {
      sandbox: "off",
    });
    assert.equal(e.sandbox, "read-only");
    assert.equal(e.network, false);
  });
});

Deno.test("writable roots are ignored from an untrusted file, inside the workspace too, even with --grant-writable-roots", async () => {
  await withWs(async (ws, outside) => {
    await Deno.mkdir(join(ws, "inner"));
    const text = `{\n  "writable_roots": ["inner", "../outside"]\n}`;
    for (const grantWritableRoots of [false, true]) {
      const e = await effective(ws, text, { grantWritableRoots });
      // One inside re-opened what penguin keeps read-only there (attack round 19 imports B2).
      assert.deepEqual(e.extraWritable, []);
      assert.equal(e.notes.length, 2);
      assert.match(
        e.notes[0]!,
        /line 2, column 22: "writable_roots": \["inner"\] is ignored \(commands may write ".*\/inner" as a root of its own.*penguin trust/,
      );
      assert.match(
        e.notes[1]!,
        /line 2, column 31: "writable_roots": \["\.\.\/outside"\] is ignored \(commands may write ".*\/outside", outside the workspace.*penguin trust/,
      );
    }
    assert.ok((await effective(ws, text)).notes[1]!.includes(`may write "${outside}"`));
  });
});

Deno.test("writable roots outside the workspace of a trusted file need --grant-writable-roots", async () => {
  await withWs(async (ws, outside) => {
    await Deno.mkdir(join(ws, "inner"));
    const text = `{\n  "writable_roots": ["inner", "../outside"]\n}`;
    const msg = await refusal(effective(ws, text, {}, [], "trusted"));
    assert.match(
      msg,
      new RegExp(
        `line 2, column 31: writable_roots: "${outside}" is outside the workspace; .*only when penguin is started with --grant-writable-roots`,
      ),
    );
    const e = await effective(ws, text, { grantWritableRoots: true }, [], "trusted");
    assert.deepEqual(e.extraWritable, [join(ws, "inner"), outside]);
    assert.match(e.notes.join("\n"), new RegExp(`may also write ${outside}`));
    // Roots inside the workspace need trust, but not the flag.
    const inner = await effective(ws, '{ "writable_roots": ["inner"] }', {}, [], "trusted");
    assert.deepEqual(inner.extraWritable, [join(ws, "inner")]);
  });
});

Deno.test("writable roots must exist, must not be / and must not lie in a protected path", async () => {
  await withWs(async (ws, outside) => {
    await Deno.mkdir(join(outside, "data", "sub"), { recursive: true });
    const bad: [string, RegExp][] = [
      [
        '{ "writable_roots": ["missing"] }',
        /writable_roots\[0\]: "missing" is not an existing directory/,
      ],
      ['{ "writable_roots": ["/"] }', /writable_roots\[0\]: "\/" is the root directory/],
      [
        `{ "writable_roots": ["${join(outside, "data", "sub")}"] }`,
        /lies inside ".*\/outside\/data", which commands must never see or change/,
      ],
      ['{ "writable_roots": ["penguin.jsonc"] }', /is not an existing directory/],
    ];
    for (const [text, re] of bad) {
      const msg = await refusal(
        effective(ws, text, { grantWritableRoots: true }, [join(outside, "data")]),
      );
      assert.match(msg, /^Invalid ".*penguin\.jsonc": line 1, column 22: /, text);
      assert.match(msg, re, text);
    }
  });
});

Deno.test("command rules from the file are added, never replacing anything", async () => {
  await withWs(async (ws) => {
    const e = await effective(
      ws,
      '{ "command_rules": [{ "name": "no-curl", "pattern": "\\\\bcurl\\\\b" }] }',
    );
    assert.deepEqual(e.commandRules, [{ name: "no-curl", pattern: "\\bcurl\\b" }]);
  });
});

Deno.test('"mcp" in the file turns MCP servers off, all or by name, and can never add one', async () => {
  await withWs(async (ws) => {
    const off = await effective(ws, '{ "mcp": "off" }');
    assert.equal(off.mcpDeny, "all");
    assert.match(off.notes.join("\n"), /MCP servers are off in this workspace/);
    const some = await effective(ws, '{ "mcp": { "deny": ["files", "web"] } }');
    assert.deepEqual(some.mcpDeny, ["files", "web"]);
    assert.deepEqual((await effective(ws, "{}")).mcpDeny, []);
    assert.match(
      await refusal(effective(ws, '{\n  "mcp": { "servers": [{ "name": "evil" }] }\n}')),
      /line 2, column 10: mcp: expected .*\(a workspace cannot add MCP servers\)/,
    );
    assert.match(
      await refusal(effective(ws, '{ "mcp": "on" }')),
      /mcp: expected "off" or \{"deny": \["server", \.\.\.\]\} \(a workspace cannot add MCP servers\)/,
    );
  });
});

Deno.test("the widening settings of a file are listed with their lines, and its hash is of its exact bytes", async () => {
  await withWs(async (ws) => {
    const text = '{\n  "sandbox": "read-only",\n  "git": "writable",\n  "network": "on",\n' +
      '  "writable_roots": [".", "../outside"],\n  "mcp": "off"\n}\n';
    await Deno.writeTextFile(join(ws, WORKSPACE_POLICY_FILE), text);
    const policy = (await loadWorkspacePolicy(ws))!;
    assert.equal(policy.sha256, await sha256Hex(text));
    assert.equal(policy.path, join(ws, WORKSPACE_POLICY_FILE));
    assert.deepEqual(
      wideningSettings(policy).map((w) => [w.key, w.position?.line]),
      [[["git"], 3], [["network"], 4], [["writable_roots", 0], 5], [["writable_roots", 1], 5]],
    );
    await Deno.writeTextFile(
      join(ws, WORKSPACE_POLICY_FILE),
      '{ "git": "read-only", "network": "off" }',
    );
    assert.deepEqual(wideningSettings((await loadWorkspacePolicy(ws))!), []);
  });
});

Deno.test("a penguin.jsonc that is a FIFO is refused instead of blocking the read", async () => {
  await withWs(async (ws) => {
    const fifo = join(ws, WORKSPACE_POLICY_FILE);
    assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success);
    await assert.rejects(loadWorkspacePolicy(ws), /not a regular file/);
  });
});

Deno.test("a trusted writable root that became a link is refused, never followed", async () => {
  await withWs(async (ws, outside) => {
    // Another session whose workspace holds `shared` replaced it by a link to a directory of
    // its choosing; the file's text (and so its trust) did not change.
    const parent = join(ws, "..");
    await Deno.mkdir(join(parent, "victim"));
    await Deno.symlink(join(parent, "victim"), join(parent, "shared"));
    const text = `{\n  "writable_roots": ["../shared", "../outside"]\n}`;
    const msg = await refusal(effective(ws, text, { grantWritableRoots: true }, [], "trusted"));
    assert.match(msg, /writable_roots\[0\]: "\.\.\/shared" cannot be used: .*symbolic link/);
    assert.match(msg, /victim/, "names the real path the link leads to now");
    // The real directory, named as it is, is taken.
    const e = await effective(
      ws,
      `{ "writable_roots": ["${outside}"] }`,
      { grantWritableRoots: true },
      [],
      "trusted",
    );
    assert.deepEqual(e.extraWritable, [outside]);
  });
});
