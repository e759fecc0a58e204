/**
 * The OmniMessage protocol: types, validation, builders and predicates.
 * Pure: this module performs no I/O.
 *
 * @module
 */
export * from "./types.ts";
export * from "./validate.ts";
export * from "./guards.ts";
export * from "./builders.ts";
export * from "./errors.ts";
