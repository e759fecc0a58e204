// Every built-in tool's JSON Schema is derived from its zod schema
// (defineTool, z.toJSONSchema). It must equal the hand-written schema the
// model was sent before the derivation (fixtures/tool_schemas_before.json),
// with one difference: a string parameter whose zod schema is `.min(1)` now
// says `minLength: 1`, which the tool always enforced.
import assert from "node:assert/strict";
import { z } from "zod";
import { argsJsonSchema } from "../../lib/tools/define.ts";
import { BUILTIN_TOOLS } from "../../lib/tools/builtin.ts";
import { describeImageTool } from "../../lib/tools/describe_image.ts";
import { SUBAGENT_TOOLS } from "../../lib/agent/subagents/tools.ts";
import { type JsonSchemaObject, toolSpec } from "../../lib/tools/tool.ts";

const BEFORE: Record<string, Record<string, unknown>> = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/tool_schemas_before.json", import.meta.url)),
);
const TOOLS = [...BUILTIN_TOOLS, describeImageTool, ...SUBAGENT_TOOLS];

/** The non-empty string parameters, which now carry `minLength: 1`. */
const MIN_LENGTH_ONE: Record<string, string[]> = {
  read_file: ["file_path"],
  edit_file: ["file_path"],
  write_file: ["file_path"],
  exec_command: ["cmd"],
  input_command: ["process_id"],
  kill_command: ["process_id"],
  read_image: ["source"],
  describe_image: ["source"],
};

function withMinLength(name: string, schema: Record<string, unknown>): Record<string, unknown> {
  const out = structuredClone(schema) as { properties: Record<string, Record<string, unknown>> };
  for (const key of MIN_LENGTH_ONE[name] ?? []) {
    const { type, description } = out.properties[key]!;
    out.properties[key] = { type, minLength: 1, description };
  }
  return out;
}

Deno.test("the fixture covers every built-in tool, and only them", () => {
  assert.deepEqual(Object.keys(BEFORE).sort(), TOOLS.map((t) => t.name).sort());
  assert.equal(TOOLS.length, 11);
});

for (const tool of TOOLS) {
  Deno.test(`${tool.name}: the derived schema is the one the model was sent (plus minLength)`, () => {
    const derived = tool.definition.parameters;
    // The text sent: the same keys in the same order, so the JSON is byte-identical.
    assert.equal(
      JSON.stringify(derived),
      JSON.stringify(withMinLength(tool.name, BEFORE[tool.name]!)),
    );
  });
}

Deno.test("the schemas sent to the model keep required description only with callDescription", () => {
  for (const tool of TOOLS) {
    const spec = toolSpec({ ...tool.definition, callDescription: false });
    const parameters = spec.parameters as JsonSchemaObject & Record<string, unknown>;
    assert.equal("description" in parameters.properties, false, tool.name);
    assert.equal(parameters.required?.includes("description") ?? false, false, tool.name);
    assert.equal("$schema" in parameters, false, tool.name);
    assert.equal("additionalProperties" in parameters, false, tool.name);
  }
});

Deno.test("callDescription lists an optional description first in required", () => {
  const args = z.object({ path: z.string(), description: z.string().optional() });
  assert.deepEqual(argsJsonSchema(args).required, ["path"]);
  assert.deepEqual(argsJsonSchema(args, true).required, ["description", "path"]);
  const none = z.object({ path: z.string().optional() });
  assert.equal(argsJsonSchema(none, true).required, undefined);
});
