import assert from "node:assert/strict";
import { type Flag, flagHelp, flagValue, parseDeclared } from "../../lib/cli/args.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { CHAT_FLAGS } from "../../lib/cli/commands/_chat_flags.ts";
import { RUN_FLAGS } from "../../lib/cli/commands/_run_flags.ts";
import { SESSION_FLAGS } from "../../lib/cli/commands/_session_flags.ts";

const COUNT: Flag<number> = {
  name: "count",
  short: "c",
  type: "string",
  value: "<n>",
  help: "how many\n(at least one)",
  parse: (raw, label) => {
    if (!/^\d+$/.test(raw)) throw new PenguinError("usage", `${label} must be a number`);
    return Number(raw);
  },
};
const TAG: Flag = { name: "tag", type: "string", value: "<t>", help: "a tag", multiple: true };
const LONGER: Flag<boolean> = { name: "a-rather-long-flag-name", type: "boolean", help: "wraps" };
const SINCE: Flag = {
  name: "since",
  type: "string",
  value: "[when]",
  optionalValue: true,
  help: "bare: from the start",
};

Deno.test("a declared flag's help puts its text at the column, continuation lines under it", () => {
  assert.equal(
    flagHelp([COUNT, TAG], 16),
    [
      "  -c, --count <n>",
      "                how many",
      "                (at least one)",
      "  --tag <t>     a tag",
    ].join("\n"),
  );
  assert.equal(
    flagHelp([COUNT, LONGER], 20),
    [
      "  -c, --count <n>   how many",
      "                    (at least one)",
      "  --a-rather-long-flag-name",
      "                    wraps",
    ].join("\n"),
  );
});

Deno.test("parseDeclared runs each given flag's parse and names the command and flag in its error", () => {
  const p = parseDeclared("demo", ["-c", "3", "--tag", "a", "--tag", "b"], [COUNT, TAG]);
  assert.equal(flagValue(p, COUNT), 3);
  assert.deepEqual(p.values["tag"], ["a", "b"]);
  assert.equal(flagValue(parseDeclared("demo", [], [COUNT]), COUNT), undefined);
  assert.throws(
    () => parseDeclared("demo", ["--count", "many"], [COUNT]),
    (e: unknown) =>
      e instanceof PenguinError && e.kind === "usage" &&
      /^demo: --count must be a number$/.test(e.message),
  );
});

Deno.test("an optional-value flag alone or before another flag is given as empty", () => {
  assert.equal(flagValue(parseDeclared("x", ["--since"], [SINCE, TAG]), SINCE), "");
  assert.equal(flagValue(parseDeclared("x", ["--since", "--tag", "t"], [SINCE, TAG]), SINCE), "");
  assert.equal(flagValue(parseDeclared("x", ["--since", "monday"], [SINCE]), SINCE), "monday");
});

Deno.test("run and chat take the same session flags, declared once", () => {
  for (const f of SESSION_FLAGS) {
    assert.ok(RUN_FLAGS.includes(f), `run lacks --${f.name}`);
    assert.ok(CHAT_FLAGS.includes(f), `chat lacks --${f.name}`);
  }
  const names = (flags: readonly Flag<unknown>[]) => flags.map((f) => f.name);
  assert.equal(new Set(names(RUN_FLAGS)).size, RUN_FLAGS.length);
  assert.equal(new Set(names(CHAT_FLAGS)).size, CHAT_FLAGS.length);
});

Deno.test("a flag's label replaces its generated name in the help, and a hidden flag is parsed but not listed", () => {
  const out: Flag = {
    name: "o",
    short: "o",
    type: "string",
    label: "-o <file>",
    help: "write here",
  };
  const alias: Flag = { name: "output", type: "string", hidden: true, help: "the same as -o" };
  assert.equal(flagHelp([out, alias], 14), "  -o <file>   write here");
  assert.equal(flagValue(parseDeclared("x", ["--output", "f"], [out, alias]), alias), "f");
  assert.equal(flagValue(parseDeclared("x", ["-o", "g"], [out, alias]), out), "g");
});
