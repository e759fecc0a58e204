import assert from "node:assert/strict";
import { join } from "node:path";
import {
  BUILTIN_TOOL_LIMITS,
  builtinTools,
  DEFAULT_MAX_OUTPUT_LENGTH,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_TOOL_DEFINITIONS,
  READ_FILE_DEFINITION,
  type ToolDefinition,
  toolSpec,
} from "../../lib/tools/mod.ts";
import { BUILTIN_NAMES, run, withDirs } from "./_support.ts";

Deno.test("the file tools have their default limits; a definition without any gets 120 s, 16000 chars", () => {
  assert.deepEqual(BUILTIN_TOOL_LIMITS.read_file, {
    permission: "r",
    timeoutMs: 30000,
    maxOutputLength: 64000,
    callDescription: false,
  });
  for (const name of ["write_file", "edit_file"]) {
    assert.deepEqual(BUILTIN_TOOL_LIMITS[name], {
      permission: "rw",
      timeoutMs: 30000,
      maxOutputLength: 16000,
      callDescription: false,
    });
  }
  assert.equal(DEFAULT_TIMEOUT_MS, 120000);
  assert.equal(DEFAULT_MAX_OUTPUT_LENGTH, 16000);
  for (const def of DEFAULT_TOOL_DEFINITIONS) {
    assert.equal(def.parameters.type, "object");
    for (const req of def.parameters.required ?? []) {
      assert.ok(req in def.parameters.properties, `${def.name}.${req}`);
    }
  }
});

Deno.test("toolSpec removes a description parameter unless callDescription is true", () => {
  const def: ToolDefinition = {
    name: "exec_like",
    description: "runs things",
    parameters: {
      type: "object",
      properties: { description: { type: "string" }, cmd: { type: "string" } },
      required: ["description", "cmd"],
    },
    permission: "rw",
    timeoutMs: 1,
    maxOutputLength: 1,
    callDescription: false,
  };
  assert.deepEqual(toolSpec(def), {
    name: "exec_like",
    description: "runs things",
    parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
  });
  assert.deepEqual(
    Object.keys(def.parameters.properties),
    ["description", "cmd"],
    "the definition is not changed",
  );
  const kept = toolSpec({ ...def, callDescription: true });
  assert.deepEqual(kept.parameters, def.parameters);
});

Deno.test("builtinTools instantiates known names only, with the configured definition", async () => {
  const tools = builtinTools([
    { ...READ_FILE_DEFINITION, maxOutputLength: 300 },
    { ...READ_FILE_DEFINITION, name: "not_a_builtin" },
  ]);
  assert.deepEqual([...tools.keys()], ["read_file"]);
  assert.deepEqual([...builtinTools().keys()], BUILTIN_NAMES);
  await withDirs(async (d) => {
    await Deno.writeTextFile(join(d.ws, "f.txt"), "x".repeat(100) + "\n" + "y".repeat(100) + "\n");
    const r = await run(tools.get("read_file"), { file_path: "f.txt" }, d);
    assert.ok(r.output.includes("(output limit reached)"));
  });
});
