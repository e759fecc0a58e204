// The bounded YAML parse: duplicate keys stay errors (found by our own linear
// check), and texts past the node, depth or alias bounds are refused.
import assert from "node:assert/strict";
import {
  parseYaml,
  parseYamlDocument,
  YAML_CONFIG_MAX_NODES,
  YAML_MAX_CHARS,
} from "../../lib/state/bounded_yaml.ts";
import { parseSystemConfig } from "../../lib/state/system_config_parse.ts";
import { parseGoalFile } from "../../lib/state/goal_file.ts";
import { PenguinError } from "../../lib/protocol/errors.ts";
import { YAMLParseError } from "yaml";

Deno.test("a duplicate key, block or flow, is an error at its line: the first one only", () => {
  const doc = parseYamlDocument("a: 1\nb:\n  c: 2\n  c: 3\nd: [1, {x: 1, x: 2}]\n", "t.yaml");
  assert.deepEqual(doc.errors.map((e) => [e.code, e.linePos?.[0]?.line]), [
    ["DUPLICATE_KEY", 4],
  ]);
  const flow = parseYamlDocument("a: 1\nd: [1, {x: 1, x: 2}]\n", "t.yaml");
  assert.deepEqual(flow.errors.map((e) => [e.code, e.linePos?.[0]?.line]), [["DUPLICATE_KEY", 2]]);
  // 49 000 duplicates make one error, not 49 000.
  const many = parseYamlDocument("top: 1\n" + "k: 1\n".repeat(49_000), "t.yaml");
  assert.deepEqual(many.errors.map((e) => [e.code, e.linePos?.[0]?.line]), [["DUPLICATE_KEY", 3]]);
  assert.throws(() => parseSystemConfig("agent:\n  name: a\nagent:\n  name: b\n", "/x/s.yaml"), {
    message: /Cannot parse "\/x\/s.yaml": line 3.*Map keys must be unique/,
  });
  const goal = parseGoalFile("objective: a\nobjective: b\nstatus: active\n");
  assert.equal(goal.ok, false);
});

Deno.test("different keys, a 1 and a '1', are not duplicates", () => {
  assert.deepEqual(parseYaml("1: a\n'1': b\n", "t"), { 1: "b" });
  assert.equal(parseYamlDocument("1: a\n'1': b\n", "t").errors.length, 0);
});

Deno.test("texts past the node or depth bound are refused before parsing, naming the file", () => {
  const cases: Array<[string, RegExp]> = [
    ["- {}\n".repeat(20_000), /more than 50000 YAML nodes/],
    ["k: v\n".repeat(50_001), /more than 50000 YAML nodes/],
    ["- a: b: c: d: e: f\n".repeat(10_001), /more than 50000 YAML nodes/],
    ["[".repeat(300), /nested more than 256 deep/],
    ["- ".repeat(300) + "x", /nested more than 256 deep/],
    [Array.from({ length: 300 }, (_, i) => " ".repeat(i) + "a:").join("\n"), /more than 256/],
  ];
  for (const [text, re] of cases) {
    assert.throws(() => parseYaml(text, "GOAL.yaml"), (err: unknown) => {
      assert.ok(err instanceof PenguinError);
      assert.match(err.message, /^GOAL\.yaml: not parsed, too costly to parse: /);
      assert.match(err.message, re);
      return true;
    });
  }
  assert.equal(parseGoalFile("- {}\n".repeat(40_000)).ok, false);
  assert.deepEqual(parseYaml("a:\n  - [1, {b: 2}]\n", "t"), { a: [[1, { b: 2 }]] });
});

Deno.test("alias expansion stays bounded", () => {
  const text = "a: &a [1, 2]\nb: [" + Array(150).fill("*a").join(", ") + "]\n";
  assert.throws(() => parseYaml(text, "t"), /resource exhaustion/);
});

Deno.test("a configuration file is held to the smaller node bound: 25 000 keys refused, 15 000 read", () => {
  const keys = (n: number) => Array.from({ length: n }, (_, i) => `k${i}: ${i}`).join("\n");
  assert.throws(
    () => parseYaml(keys(25_000), "system_config.yaml", YAML_CONFIG_MAX_NODES),
    /system_config\.yaml: not parsed, too costly to parse: more than 20000 YAML nodes/,
  );
  const read = parseYaml(keys(15_000), "system_config.yaml", YAML_CONFIG_MAX_NODES);
  assert.equal(Object.keys(read as Record<string, unknown>).length, 15_000);
  // Other files (batch task files) keep the larger bound.
  assert.equal(Object.keys(parseYaml(keys(25_000), "tasks.yaml") as object).length, 25_000);
});

Deno.test("GOAL.yaml is held to the configuration bound", () => {
  const wide = "objective: a\nstatus: active\n" +
    Array.from({ length: 25_000 }, (_, i) => `k${i}: ${i}`).join("\n");
  const goal = parseGoalFile(wide);
  assert.equal(goal.ok, false);
  assert.match(JSON.stringify(goal), /more than 20000 YAML nodes/);
});

Deno.test("a text over 2 Mi characters is refused before parsing, naming the file and the size", () => {
  const text = "a: " + "x".repeat(YAML_MAX_CHARS) + "\n";
  assert.throws(() => parseYaml(text, "tasks.yaml"), (err: unknown) => {
    assert.ok(err instanceof PenguinError);
    assert.match(
      err.message,
      /^tasks\.yaml: not parsed, too costly to parse: more than 2 Mi characters \(2097156\)/,
    );
    return true;
  });
  assert.equal(
    (parseYaml("a: " + "x".repeat(YAML_MAX_CHARS - 10), "t") as { a: string }).a.length,
    YAML_MAX_CHARS - 10,
  );
});

Deno.test("tags other than JSON's are refused at their line, not decoded", () => {
  for (
    const [text, shown] of [
      ["a: 1\nb: !!binary QUFB\n", "!!binary"],
      ["a: 1\nb: !!set {x}\n", "!!set"],
      ["a: 1\nb: !custom x\n", "!custom"],
      ["a: 1\nb:\n  - !!timestamp 2001-12-14\n", "!!timestamp"],
    ] as const
  ) {
    const doc = parseYamlDocument(text, "t.yaml");
    assert.equal(doc.errors.length, 1, text);
    assert.equal(doc.errors[0]!.code, "TAG_RESOLVE_FAILED");
    assert.equal(doc.errors[0]!.linePos?.[0]?.line, text.startsWith("a: 1\nb:\n") ? 3 : 2);
    assert.ok(
      doc.errors[0]!.message.startsWith(`The tag ${shown} is not allowed`),
      doc.errors[0]!.message,
    );
  }
  assert.throws(
    () => parseSystemConfig("agent:\n  name: !!binary QUFB\n", "/x/s.yaml"),
    /Cannot parse "\/x\/s.yaml": line 2.*tag !!binary is not allowed/,
  );
  assert.deepEqual(parseYaml("a: !!str 1\nb: !!int '2'\nc: !!null ''\n", "t"), {
    a: "1",
    b: 2,
    c: null,
  });
});

Deno.test("aliases are weighed by what they copy: 99 copies of a 30 000-char anchor are refused", () => {
  const big = "x".repeat(30_000);
  const text = `a: &p "${big}"\nl:\n` + "  - *p\n".repeat(99);
  const doc = parseYamlDocument(text, "t.yaml");
  assert.deepEqual(doc.errors.map((e) => [e.code, e.linePos?.[0]?.line]), [["BAD_ALIAS", 3]]);
  assert.match(doc.errors[0]!.message, /Aliases would copy more than 2 Mi characters/);
  assert.throws(() => parseYaml(text, "t"), /Aliases would copy more than 2 Mi characters/);
  // Nested: an anchor of aliases weighs what its aliases copy.
  const nested =
    `a: &p "${big}"\nb: &q [*p, *p, *p, *p, *p, *p, *p, *p, *p, *p]\nc: [*q, *q, *q, *q, *q, *q, *q, *q, *q]\n`;
  assert.equal(parseYamlDocument(nested, "t").errors[0]?.code, "BAD_ALIAS");
  // Small copies are fine.
  const fine = `a: &p "${"x".repeat(1000)}"\nl: [*p, *p, *p]\n`;
  assert.equal((parseYaml(fine, "t") as { l: string[] }).l[2]!.length, 1000);
});

Deno.test("a text of many YAML errors keeps twenty, at their lines, and stops reading", () => {
  // Red team N19/N21: every error was built, with an excerpt: 400 KB of these took 356 MB.
  const doc = parseYamlDocument("- a: b: c\n".repeat(5_000), "t.yaml");
  assert.equal(doc.errors.length, 21);
  assert.deepEqual(doc.errors.slice(0, 2).map((e) => [e.linePos?.[0]?.line, e.message]), [
    [1, "Nested mappings are not allowed in compact mappings at line 1, column 6"],
    [2, "Nested mappings are not allowed in compact mappings at line 2, column 6"],
  ]);
  const last = doc.errors.at(-1)!;
  assert.equal(last.code, "MORE_ERRORS");
  assert.equal(last.linePos?.[0]?.line, 21);
  assert.match(last.message, /^more than 20 errors; reading stopped$/);
  // The first error is what a configuration reader shows.
  assert.throws(() => parseSystemConfig("- a: b: c\n".repeat(3_000), "/x/s.yaml"), {
    message: /^Cannot parse "\/x\/s.yaml": line 1, column 6: Nested mappings are not allowed/,
  });
  const goal = parseGoalFile("- a: b: c: d: e: f\n".repeat(18_990));
  assert.equal(goal.ok, false);
  assert.match(goal.ok ? "" : goal.problem, /too costly to parse: more than 20000 YAML nodes/);
});

Deno.test("aliases past the library's alias count are an error at the first alias's line", () => {
  // Red team N13: 4 levels of 3 aliases passed the copy bound and reached the
  // user as "internal error: Excessive alias count".
  const text = 'x:\n  l0: &l0 "' + "q".repeat(16_000) + '"\n' +
    [1, 2, 3, 4].map((j) => `  l${j}: &l${j} [${Array(3).fill(`*l${j - 1}`).join(", ")}]\n`)
      .join("");
  assert.throws(() => parseYaml(text, "t.yaml"), (err: unknown) => {
    assert.ok(err instanceof YAMLParseError, String(err));
    assert.equal(err.linePos?.[0]?.line, 3);
    assert.match(err.message, /^Aliases would be expanded more than 100 times/);
    return true;
  });
  assert.throws(() => parseSystemConfig(text, "/x/s.yaml"), {
    message: /^Cannot parse "\/x\/s.yaml": line 3, column 12: Aliases would be expanded/,
  });
});
