/**
 * Text that grows by many small pieces (a model streams arguments, text and
 * reasoning a few characters at a time). Appending with `+=` builds a rope
 * that costs far more than the text itself (a node per 8-character delta),
 * so pieces are joined into flat blocks as they come.
 *
 * A piece waits for at most {@linkcode MAX_PIECES} others (or a block's
 * worth of characters), so it dies young. A piece is a string of its own (32
 * bytes for 16 characters) in an array slot; kept until 64 Ki characters had
 * come (4096 pieces of a 16-character stream) it outlived V8's young
 * generation, so every piece was copied into the old one and stayed there as
 * garbage until a full collection: with the array's spent backing stores,
 * about three bytes a character beside the text itself.
 *
 * @module
 */

/** Pieces are joined into one flat block once this many characters are waiting. */
const BLOCK = 1024;

/** Pieces are joined into one flat block once this many are waiting (tiny pieces). */
const MAX_PIECES = 64;

/** An append-only text held as flat blocks. */
export class TextBuffer {
  #blocks: string[] = [];
  #pieces: string[] = [];
  #waiting = 0;
  #length = 0;

  /** Characters held. */
  get length(): number {
    return this.#length;
  }

  /** Append `s`. */
  append(s: string): void {
    if (s === "") return;
    this.#pieces.push(s);
    this.#waiting += s.length;
    this.#length += s.length;
    if (this.#waiting >= BLOCK || this.#pieces.length >= MAX_PIECES) this.#flush();
  }

  /** The whole text. */
  text(): string {
    this.#flush();
    if (this.#blocks.length > 1) this.#blocks = [this.#blocks.join("")];
    return this.#blocks[0] ?? "";
  }

  /** Forget the text. */
  clear(): void {
    this.#blocks = [];
    this.#pieces = [];
    this.#waiting = 0;
    this.#length = 0;
  }

  #flush(): void {
    if (this.#pieces.length === 0) return;
    this.#blocks.push(this.#pieces.length === 1 ? this.#pieces[0]! : this.#pieces.join(""));
    this.#pieces = [];
    this.#waiting = 0;
  }
}
