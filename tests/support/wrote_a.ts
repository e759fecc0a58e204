/**
 * The scripted model's usual first task: it writes `a.txt` (holding "A")
 * with write_file, then says "Wrote it.".
 *
 * @module
 */
import { type ScriptedTurn, turn } from "./model_server.ts";

/** The two turns of the first task: the write_file call, then the answer. */
export function wroteA(): ScriptedTurn[] {
  return [
    turn.toolCall("write_file", { file_path: "a.txt", content: "A" }),
    turn.text("Wrote it."),
  ];
}
