// Each provider with presets has exactly one recommended model (what a first run suggests),
// and it is never the most expensive of the provider's presets.
import assert from "node:assert/strict";
import {
  MODEL_PRESETS,
  presetsOf,
  PROVIDER_GROUPS,
  recommendedPreset,
} from "../../lib/models/catalog.ts";

Deno.test("every provider with presets has one recommended model, never its most expensive", () => {
  const cost = (p: (typeof MODEL_PRESETS)[number]) => p.pricing.cache_write + p.pricing.output;
  for (const g of PROVIDER_GROUPS) {
    const presets = presetsOf(g.id);
    const recommended = presets.filter((p) => p.recommended === true);
    if (presets.length === 0) {
      assert.equal(recommendedPreset(g.id), undefined, g.id);
      continue;
    }
    assert.equal(recommended.length, 1, `${g.id}: ${recommended.map((p) => p.model_id)}`);
    assert.equal(recommendedPreset(g.id), recommended[0]);
    const max = Math.max(...presets.map(cost));
    const min = Math.min(...presets.map(cost));
    if (max > min) {
      assert.ok(
        cost(recommended[0]!) < max,
        `${g.id}: ${recommended[0]!.model_id} is the priciest`,
      );
    }
  }
});
