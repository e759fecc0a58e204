/**
 * Where the confined file tools' Worker entry module lives (embedded in the
 * compiled binary with `--include`, see scripts/compile.ts).
 *
 * @module
 */

/** The worker entry module of the confined file tools. */
export const FILE_WORKER_URL: URL = new URL("./file_worker.ts", import.meta.url);
