/**
 * penguin SDK: the public surface for Deno programs that embed penguin.
 *
 * @module
 */
export * from "./protocol/mod.ts";
export { VERSION } from "./version.ts";
