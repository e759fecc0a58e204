/**
 * A scripted model turn that makes one tool call with a given id.
 *
 * @module
 */
import { item, type ScriptedTurn, turn } from "../support/model_server.ts";

/** A turn with the one tool call `name(args)`, of id `id`. */
export const call = (name: string, args: Record<string, unknown>, id: string): ScriptedTurn =>
  turn.of(item.toolCall(name, args, { id }));
