// The history window of a conversation is also held to what the process's other conversations
// (a session's subagents, its parent) leave of the process-wide image bound, and what it keeps
// counts for them (attack round 20 bounded repro02: eight subagents each kept a window and a
// response of their own, ~900 MB).
import assert from "node:assert/strict";
import { toolCallOutput } from "../../lib/protocol/builders.ts";
import {
  HISTORY_IMAGES_MAX_BYTES,
  PROCESS_IMAGES_MAX_BYTES,
} from "../../lib/protocol/image_data.ts";
import type { CompleteMessage } from "../../lib/protocol/types.ts";
import { HISTORY_IMAGE_NOTE, windowImages } from "../../lib/agent/_image_window.ts";
import { holdImages, imagesHeldBesides } from "../../lib/tools/image_ledger.ts";

const MiB = 1024 * 1024;
/** A data URL of `mib` MiB of image data. */
const image = (mib: number) => `data:image/png;base64,${"A".repeat((mib * MiB * 4) / 3)}`;
const outputs = (n: number, mib: number): CompleteMessage[] =>
  Array.from(
    { length: n },
    (_, i) => toolCallOutput(`c${i}`, `out ${i}`, "completed", [image(mib)]),
  );
const kept = (msgs: readonly CompleteMessage[]) =>
  msgs.map((m) => m.type === "tool_call_output" && (m.images?.length ?? 0) > 0);

Deno.test("a conversation's window keeps only what the others leave of the process bound", () => {
  const other = {};
  const self = {};
  try {
    holdImages(other, PROCESS_IMAGES_MAX_BYTES - 10 * MiB);
    const history = outputs(3, 6);
    const wire = [...history];
    windowImages(wire, history, [], self);
    // 10 MiB left: the newest 6 MiB output only.
    assert.deepEqual(kept(wire), [false, false, true]);
    assert.deepEqual(kept(history), [false, false, true]);
    assert.ok((wire[0] as { output: string }).output.endsWith(HISTORY_IMAGE_NOTE));
    assert.equal(imagesHeldBesides(other), 6 * MiB, "what it keeps counts for the others");
    // The others let go: the next output is windowed to the conversation's own bound again.
    holdImages(other, 0);
    const more = outputs(2, 6);
    history.push(...more);
    wire.push(...more);
    windowImages(wire, history, [], self);
    assert.deepEqual(kept(wire), [false, false, true, true, true]);
    assert.equal(imagesHeldBesides(other), 18 * MiB);
  } finally {
    holdImages(other, 0);
    holdImages(self, 0);
  }
});

Deno.test("one conversation alone keeps its own window, and without a holder nothing is counted", () => {
  const self = {};
  try {
    const history = outputs(5, 6);
    const wire = [...history];
    windowImages(wire, history, [], self);
    assert.equal(imagesHeldBesides(undefined), 18 * MiB);
    assert.ok(18 * MiB <= HISTORY_IMAGES_MAX_BYTES);
    holdImages(self, 0);
    const loose = outputs(2, 6);
    windowImages([...loose], [...loose], []);
    assert.equal(imagesHeldBesides(undefined), 0);
  } finally {
    holdImages(self, 0);
  }
});
