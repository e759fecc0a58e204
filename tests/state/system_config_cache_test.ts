// The parsed-config cache of system_config.yaml (lib/state/system_config_cache.ts): an unchanged
// file is read from it, a changed one is parsed again, a cache that does not fit is ignored, and
// a bad file's error is the parser's, cache or not.
import assert from "node:assert/strict";
import { loadOrInitAgent } from "../../lib/state/agent_init.ts";
import { agentPaths } from "../../lib/state/paths.ts";
import { systemConfigCachePath } from "../../lib/state/system_config_cache.ts";
import { parseSystemConfig } from "../../lib/state/system_config_parse.ts";
import { VERSION } from "../../lib/version.ts";
import { withRoot } from "../support/roots.ts";

/** An agent in `root` whose system_config.yaml holds `text`; its paths and cache path. */
async function agentWith(root: string, text: string) {
  const ref = { root, projectId: "default_project", agentId: "default_agent" };
  await loadOrInitAgent(ref);
  const paths = agentPaths(ref);
  await Deno.writeTextFile(paths.systemConfig, text);
  const cache = systemConfigCachePath(paths.systemConfig);
  // The agent's creation cached its default configuration: each test starts with no cache.
  await Deno.remove(cache);
  return { ref, paths, cache };
}

/** The hex SHA-256 of `text`'s UTF-8 bytes. */
async function sha256(text: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

const exists = (path: string) => Deno.stat(path).then(() => true, () => false);

Deno.test("an unchanged system_config.yaml is read from its cache, outside agent_state", async () => {
  await withRoot(async (root) => {
    const text = "system_prompt: from the file\nmax_turns: 3\n";
    const { ref, paths, cache } = await agentWith(root, text);
    assert.ok(!cache.startsWith(paths.agentState + "/"), "a snapshot would pack the cache");
    assert.equal(await exists(cache), false);
    assert.equal((await loadOrInitAgent(ref)).systemConfig.max_turns, 3);
    const written = JSON.parse(await Deno.readTextFile(cache));
    assert.equal(written.sha256, await sha256(text));
    assert.deepEqual(written.config, parseSystemConfig(text, paths.systemConfig));
    assert.equal((await Deno.stat(cache)).mode! & 0o777, 0o600);
    // The cache is what is read: one that says otherwise for the same content wins.
    written.config.max_turns = 99;
    await Deno.writeTextFile(cache, JSON.stringify(written));
    assert.equal((await loadOrInitAgent(ref)).systemConfig.max_turns, 99);
  });
});

Deno.test("a changed system_config.yaml is parsed again and its new value used", async () => {
  await withRoot(async (root) => {
    const { ref, paths, cache } = await agentWith(root, "system_prompt: p\nmax_turns: 3\n");
    assert.equal((await loadOrInitAgent(ref)).systemConfig.max_turns, 3);
    await Deno.writeTextFile(paths.systemConfig, "system_prompt: p\nmax_turns: 4\n");
    assert.equal((await loadOrInitAgent(ref)).systemConfig.max_turns, 4);
    const written = JSON.parse(await Deno.readTextFile(cache));
    assert.equal(written.sha256, await sha256("system_prompt: p\nmax_turns: 4\n"));
    assert.equal(written.config.max_turns, 4);
  });
});

Deno.test("a cache that does not fit is ignored and the file parsed", async () => {
  await withRoot(async (root) => {
    const text = "system_prompt: p\nmax_turns: 3\n";
    const { ref, cache } = await agentWith(root, text);
    const good = { format: 1, penguin: VERSION, sha256: await sha256(text) };
    const corrupt: [string, string][] = [
      ["not JSON", "{ not json"],
      ["truncated", JSON.stringify({ ...good, config: { system_prompt: "x" } }).slice(0, 40)],
      ["fails the schema", JSON.stringify({ ...good, config: { max_turns: 99 } })],
      ["wrong kind", JSON.stringify({ ...good, config: { system_prompt: 5, max_turns: 99 } })],
      ["another hash", JSON.stringify({ ...good, sha256: "0".repeat(64), config: mine(99) })],
      ["another version", JSON.stringify({ ...good, penguin: "0.0.0-x", config: mine(99) })],
      ["another format", JSON.stringify({ ...good, format: 2, config: mine(99) })],
      ["a list", "[]"],
    ];
    for (const [what, body] of corrupt) {
      await Deno.writeTextFile(cache, body);
      assert.equal((await loadOrInitAgent(ref)).systemConfig.max_turns, 3, what);
      // … and replaced by a good one.
      assert.equal(JSON.parse(await Deno.readTextFile(cache)).config.max_turns, 3, what);
    }
    // A directory in its place is no cache either.
    await Deno.remove(cache);
    await Deno.mkdir(cache);
    assert.equal((await loadOrInitAgent(ref)).systemConfig.max_turns, 3);
  });
});

function mine(maxTurns: number) {
  return { system_prompt: "p", max_turns: maxTurns };
}

Deno.test("a bad system_config.yaml gives the parser's file-and-line error, cache or not", async () => {
  await withRoot(async (root) => {
    const { ref, paths, cache } = await agentWith(root, "system_prompt: p\nmax_turns: 3\n");
    await loadOrInitAgent(ref);
    const before = await Deno.readTextFile(cache);
    for (
      const bad of [
        "system_prompt: p\nmodel: [1\n",
        "system_prompt: p\nmax_turns: x\n",
        "name: no prompt\n",
      ]
    ) {
      await Deno.writeTextFile(paths.systemConfig, bad);
      let expected: Error | undefined;
      try {
        parseSystemConfig(bad, paths.systemConfig);
      } catch (err) {
        expected = err as Error;
      }
      assert.ok(expected, bad);
      if (!bad.startsWith("name")) assert.match(expected.message, /: line \d+, column \d+: /);
      await assert.rejects(loadOrInitAgent(ref), (err: Error) => {
        assert.equal(err.message, expected.message);
        assert.equal(err.constructor, expected.constructor);
        return true;
      });
      // Nothing is cached for a bad file.
      assert.equal(await Deno.readTextFile(cache), before);
    }
  });
});

Deno.test("a value JSON does not hold exactly is never cached", async () => {
  await withRoot(async (root) => {
    const { ref, cache } = await agentWith(root, "system_prompt: p\nratio: .nan\nzero: -0\n");
    for (let i = 0; i < 2; i++) {
      const cfg = (await loadOrInitAgent(ref)).systemConfig;
      assert.ok(Number.isNaN(cfg.ratio));
      assert.ok(Object.is(cfg.zero, -0));
    }
    assert.equal(await exists(cache), false);
  });
});

Deno.test("a file with a byte order mark and invalid UTF-8 reads as Deno.readTextFile reads it", async () => {
  await withRoot(async (root) => {
    const { ref, paths } = await agentWith(root, "system_prompt: p\n");
    const bytes = new Uint8Array([
      0xef,
      0xbb,
      0xbf,
      ...new TextEncoder().encode("system_prompt: a"),
      0xff,
      0x0a,
    ]);
    await Deno.writeFile(paths.systemConfig, bytes);
    const expected = parseSystemConfig(await Deno.readTextFile(paths.systemConfig), "f");
    for (let i = 0; i < 2; i++) {
      assert.equal((await loadOrInitAgent(ref)).systemConfig.system_prompt, expected.system_prompt);
    }
  });
});

Deno.test("a new agent's configuration is cached as it is created", async () => {
  await withRoot(async (root) => {
    const ref = { root, projectId: "default_project", agentId: "default_agent" };
    const made = await loadOrInitAgent(ref);
    assert.equal(made.created, true);
    const paths = agentPaths(ref);
    const written = JSON.parse(await Deno.readTextFile(systemConfigCachePath(paths.systemConfig)));
    assert.equal(written.sha256, await sha256(await Deno.readTextFile(paths.systemConfig)));
    assert.deepEqual(written.config, (await loadOrInitAgent(ref)).systemConfig);
  });
});
