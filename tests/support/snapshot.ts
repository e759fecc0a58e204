// Minimal snapshot assertions: `UPDATE_SNAPSHOTS=1 deno task test` rewrites them.
import assert from "node:assert/strict";

/** Compare `actual` with the snapshot file at `url`, or write it when updating. */
export async function assertSnapshot(actual: string, url: URL): Promise<void> {
  if (Deno.env.get("UPDATE_SNAPSHOTS") === "1") {
    await Deno.mkdir(new URL(".", url), { recursive: true });
    await Deno.writeTextFile(url, actual);
    return;
  }
  let expected: string;
  try {
    expected = await Deno.readTextFile(url);
  } catch {
    throw new Error(
      `snapshot ${url.pathname} is missing; run with UPDATE_SNAPSHOTS=1 to create it`,
    );
  }
  assert.equal(
    actual,
    expected,
    `snapshot ${url.pathname} differs; run with UPDATE_SNAPSHOTS=1 if intended`,
  );
}
