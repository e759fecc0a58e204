/**
 * How much of a file the file tools read, in one place. Every file tool
 * checks the size before it reads and reads through a handle, a chunk at a
 * time, never past its limit, so a huge (or sparse) file in the workspace
 * cannot make the tool host grow; the refusals name the limit.
 *
 * @module
 */

import { MiB } from "../protocol/format_size.ts";

/** Largest file edit_file reads (it holds the text, the edited text and the diff at once). */
export const EDIT_FILE_MAX_BYTES = 16 * MiB;
/** Bytes read_file scans per call at most (it pages through longer files). */
export const READ_FILE_SCAN_BYTES = 8 * MiB;
/** Previous content write_file reads for its diff at most; a larger file is overwritten unread. */
export const WRITE_FILE_DIFF_MAX_BYTES = 1 * MiB;
/** Largest image read_image (and describe_image) accepts. */
export const IMAGE_MAX_BYTES = 5 * MiB;
/** One read of a bounded read: an abort is seen between two chunks. */
export const READ_CHUNK_BYTES = 1 * MiB;

export { formatSize } from "../protocol/format_size.ts";
