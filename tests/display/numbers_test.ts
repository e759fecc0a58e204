import assert from "node:assert/strict";
import { formatDuration, formatTokens, formatUsd } from "../../lib/display/numbers.ts";

Deno.test("token counts read 950, 1.2k, 1.5M, 1.2B with one decimal and their sign", () => {
  assert.deepEqual(
    [0, 999, 1000, 1234, 15_000, 123_456, 999_949, 1_500_000, 2_000_000_000, 1_234_567_890, -300]
      .map(formatTokens),
    ["0", "999", "1k", "1.2k", "15k", "123.5k", "999.9k", "1.5M", "2B", "1.2B", "-300"],
  );
  assert.deepEqual([-1234, -2_500_000].map(formatTokens), ["-1.2k", "-2.5M"]);
});

Deno.test("a token count that rounds to 1000 of a unit reads as the next unit", () => {
  assert.deepEqual(
    [999_950, 999_999, 999_950_000, 1_234_567_890_123].map(formatTokens),
    ["1M", "1M", "1B", "1234.6B"],
  );
});

Deno.test("durations read 820ms, 2.3s, 1m3s and 2h5m", () => {
  assert.deepEqual(
    [0, 820, 999, 1000, 2300, 59_900, 63_000, 119_700, 3_600_000, 7_500_000, -5, NaN].map(
      formatDuration,
    ),
    ["0ms", "820ms", "999ms", "1s", "2.3s", "59.9s", "1m3s", "2m0s", "1h0m", "2h5m", "0ms", "-"],
  );
});

Deno.test("USD amounts read $0, two significant digits under a cent, else cents", () => {
  assert.deepEqual(
    [0, 0.0021, 0.0036, 0.5, 1.234, 99.999, 123.4].map(formatUsd),
    ["$0", "$0.0021", "$0.0036", "$0.50", "$1.23", "$100", "$123"],
  );
});
