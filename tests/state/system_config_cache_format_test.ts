// The system_config.yaml cache (lib/state/system_config_cache.ts) holds parsed values keyed by the
// file's bytes, penguin's version and the cache's FORMAT. Between two builds of one version, a
// change to how a file is parsed would leave caches of the old parse in use: so this test pins
// the sources that decide the parsed value, and fails when one changes until FORMAT is raised
// and the pin below updated with it.
import assert from "node:assert/strict";

const DECIDING = [
  "lib/state/system_config_parse.ts",
  "lib/state/_system_config_schema.ts",
  "lib/state/bounded_yaml.ts",
];
/** FORMAT and the SHA-256 of the sources above, as of the last FORMAT raise. */
const PINNED = {
  format: 1,
  sha256: "11f006126eb7375ae6fd61a27984060f14db13fdca29f9e39e69b7de1835304b",
};

async function sourcesHash(): Promise<string> {
  const parts: string[] = [];
  for (const rel of DECIDING) {
    parts.push(rel, await Deno.readTextFile(new URL(`../../${rel}`, import.meta.url)));
  }
  const bytes = new TextEncoder().encode(parts.join("\0"));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("the system_config cache's FORMAT is raised whenever the parse that fills it changes", async () => {
  const cacheSource = await Deno.readTextFile(
    new URL("../../lib/state/system_config_cache.ts", import.meta.url),
  );
  const format = Number(/^const FORMAT = (\d+);$/m.exec(cacheSource)?.[1]);
  const hash = await sourcesHash();
  assert.deepEqual(
    { format, sha256: hash },
    PINNED,
    `the sources that parse system_config.yaml (${DECIDING.join(", ")}) changed: raise FORMAT ` +
      `in lib/state/system_config_cache.ts when the parsed value may differ, then pin ` +
      `{ format: <FORMAT>, sha256: "${hash}" } here`,
  );
});
