/**
 * A `penguin run` whose model streams one hostile response past a limit of
 * lib/models/limits.ts: the run ends with the cap error, the response is
 * not retried, penguin stops reading it (the server sees the client go),
 * stays under a peak bound, and leaves a valid trace.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { WireProtocol } from "../../lib/models/wire.ts";
import { startModelServer, turn } from "../support/model_server.ts";
import { makeRoot } from "../support/roots.ts";
import { runCliPeak } from "../support/peak_memory.ts";
import { runCli } from "../support/cli.ts";

const MB = 1000 * 1000;

/** A response streamed from `source` on `protocol`, past the limit `cap` names. */
export interface CapCase {
  protocol: WireProtocol;
  /** The first response's events; the second response is plain text. */
  source: () => Iterator<string>;
  /** The cap error. */
  cap: RegExp;
  /** The most penguin (or any process it started) may hold at its peak, in bytes. */
  peakLimit: number;
}

/** Run `penguin run` against `k`'s response and check that it stopped at the cap. */
export async function assertRunStopsAtCap(k: CapCase): Promise<void> {
  const server = await startModelServer({
    handler: (_req, index) =>
      index === 0 ? { items: [], event_source: k.source } : turn.text("done"),
  });
  const sb = await makeRoot(server, { visible: true, protocol: k.protocol });
  try {
    const r = await runCliPeak(
      ["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "go"],
      sb.base,
    );
    assert.equal(r.code, 1, r.stdout.slice(-2000) + r.stderr.slice(-2000));
    assert.match(r.stdout + r.stderr, k.cap);
    assert.equal(server.requests.length, 1, "a response past a limit is not retried");
    await server.requests[0]!.disconnected;
    assert.ok(server.requests[0]!.clientGone, "penguin stopped reading the response");
    assert.ok(r.peakBytes <= k.peakLimit, `penguin peak ${Math.round(r.peakBytes / MB)} MB`);
    const v = await runCli(["--root", sb.root, "trace", "validate", sb.root]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
  } finally {
    await server.close();
    await sb.cleanup();
  }
}
