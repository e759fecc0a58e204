/**
 * OmniMessage protocol types: the envelope every stream event and every trace
 * record shares, and each payload it can carry.
 *
 * The protocol is PenguinHarness-compatible: field names and value sets are
 * exactly those of its traces, so a trace moves between the two unchanged.
 * Every object type is open: unknown extra fields are preserved by readers.
 *
 * @module
 */
export * from "./base.ts";
export * from "./messages.ts";
export * from "./events.ts";
export * from "./envelope.ts";
