/**
 * A mask of records (the secrets of a view or an import, applied to every
 * string of a record) and the same mask applied to one text.
 *
 * @module
 */
import type { EventMsgEnvelope, OmniMessage } from "./types.ts";

/** A record transform masking every string of a record (the same record when nothing changed). */
export type RecordMask = (record: OmniMessage) => OmniMessage;

/** `text` masked by `mask` as a string of a record is (itself when there is no mask). */
export function maskedText(mask: RecordMask | undefined, text: string): string {
  if (!mask) return text;
  const probe: OmniMessage = {
    timestamp: "",
    type: "event_msg",
    payload: { type: "notice", text } as unknown as EventMsgEnvelope["payload"],
  };
  const out = mask(probe);
  return out === probe ? text : String((out.payload as unknown as { text: unknown }).text);
}
