/**
 * The JSON Schema validator penguin gives the MCP SDK's client: one that
 * compiles nothing and accepts every value.
 *
 * The SDK compiles each listed tool's `outputSchema` at `tools/list` and
 * checks every `structuredContent` against it, by default with ajv, in
 * penguin's own thread. Those schemas come from the server: a `pattern`
 * that backtracks without end holds penguin up (it then cannot even act on
 * SIGTERM), and a schema of tens of thousands of properties costs hundreds
 * of MB to compile. penguin needs neither: the server answers for its own
 * output, and what it sends reaches the model as text, bounded like any
 * tool output. So no server-supplied schema is compiled or run in penguin.
 *
 * @module
 */
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from "@modelcontextprotocol/sdk/validation/types.js";

/** Accept `input` as it is. */
function accept<T>(input: unknown): { valid: true; data: T; errorMessage: undefined } {
  return { valid: true, data: input as T, errorMessage: undefined };
}

/** A validator that never looks at the schema: every value is valid. */
export const NO_SCHEMA_VALIDATION: jsonSchemaValidator = {
  getValidator<T>(_schema: JsonSchemaType): JsonSchemaValidator<T> {
    return accept<T>;
  },
};
