/**
 * The results file of a batch: one JSON line per task event, appended with
 * one `write(2)` on an `O_APPEND` handle (so lines of several processes
 * never interleave), the record of the batch. A task gets a `started` line
 * as soon as its session exists (a killed process's rerun resumes that
 * session) and a final line (`completed`, `failed`, `aborted`). Reading is
 * tolerant: a torn last line (a process killed mid-write) is skipped, and
 * the next append starts on a new line.
 *
 * @module
 */
import { z } from "zod";
import { PenguinError } from "../protocol/errors.ts";
import { jsonCostProblem } from "../protocol/bounded_json.ts";
import { readBatchInput } from "./input_file.ts";

/** What became of a task. `started`: its session exists and it has not ended (yet). */
export type Outcome = "started" | "completed" | "failed" | "aborted";

/** Token counts of a task's session. */
export interface TaskTokens {
  /** Input tokens (cached and uncached). */
  input: number;
  /** Output tokens. */
  output: number;
  /** All of them. */
  total: number;
}

/** One line of the results file. */
export interface ResultRecord {
  /** The task id. */
  id: string;
  outcome: Outcome;
  /** The task's session, once it exists. */
  session_id?: string;
  /** The session's (latest) trace file. */
  trace?: string;
  /** Model requests made (this attempt). */
  turns?: number;
  tokens?: TaskTokens;
  /** USD, or null when the model has no price. */
  cost?: number | null;
  /** Wall time of this attempt (ms). */
  wall_ms?: number;
  /** Why it did not complete. */
  reason?: string;
  /** The session was resumed (an earlier attempt was interrupted). */
  resumed?: boolean;
  /** The shard that ran it (`index/shards`). */
  shard?: string;
  /** When the line was written (ISO 8601). */
  at: string;
}

const RECORD = z.object({
  id: z.string(),
  outcome: z.enum(["started", "completed", "failed", "aborted"]),
  session_id: z.string().optional(),
  trace: z.string().optional(),
  turns: z.number().optional(),
  tokens: z.object({ input: z.number(), output: z.number(), total: z.number() }).optional(),
  cost: z.number().nullable().optional(),
  wall_ms: z.number().optional(),
  reason: z.string().optional(),
  resumed: z.boolean().optional(),
  shard: z.string().optional(),
  at: z.string(),
});

/**
 * The most a results file may hold. One line per attempt of a task, a few
 * hundred bytes each: 64 MiB is some 200 000 attempts, more than any one
 * batch (or the merged pods of a Job) writes.
 */
export const MAX_RESULTS_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Parse the text of a results file: its valid records in order (other
 * lines — torn, foreign, or too costly to parse — are skipped).
 */
export function parseResults(text: string): ResultRecord[] {
  const out: ResultRecord[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "" || jsonCostProblem(line) !== undefined) continue;
    try {
      const got = RECORD.safeParse(JSON.parse(line));
      if (got.success) out.push(got.data as ResultRecord);
    } catch {
      // A torn or foreign line.
    }
  }
  return out;
}

/**
 * The records of the results file at `path` ([] when there is none). A
 * FIFO, device or socket, or a file over {@linkcode MAX_RESULTS_FILE_BYTES},
 * is refused before it is read.
 */
export async function readResults(path: string): Promise<ResultRecord[]> {
  const text = await readBatchInput(
    path,
    "batch: cannot read the results file",
    MAX_RESULTS_FILE_BYTES,
    "runtime",
  );
  return text === undefined ? [] : parseResults(text);
}

/** What the next run does with a task, given the records so far. */
export type TaskState =
  | { kind: "done"; record: ResultRecord }
  | { kind: "resume"; sessionId: string }
  | { kind: "new" };

/**
 * The state of every task id in `records`: done once any line says
 * `completed`; else resumed in the last session recorded for it; else new.
 */
export function taskStates(records: ResultRecord[]): Map<string, TaskState> {
  const out = new Map<string, TaskState>();
  for (const r of records) {
    const now = out.get(r.id);
    if (now?.kind === "done") continue;
    if (r.outcome === "completed") out.set(r.id, { kind: "done", record: r });
    else if (r.session_id !== undefined) out.set(r.id, { kind: "resume", sessionId: r.session_id });
    else if (now === undefined) out.set(r.id, { kind: "new" });
  }
  return out;
}

/** An open results file: each `append` is one line in one write. */
export interface ResultsWriter {
  append(record: ResultRecord): Promise<void>;
  close(): void;
}

/** Open `path` for appending (created 0600 when missing; a torn last line is ended first). */
export async function openResults(path: string): Promise<ResultsWriter> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { append: true, create: true, mode: 0o600 });
  } catch (err) {
    throw new PenguinError(
      "runtime",
      `batch: cannot open the results file "${path}" for appending: ${(err as Error).message}`,
    );
  }
  const enc = new TextEncoder();
  const size = (await file.stat()).size;
  let heal = false;
  if (size > 0) {
    const probe = await Deno.open(path, { read: true });
    try {
      await probe.seek(size - 1, Deno.SeekMode.Start);
      const last = new Uint8Array(1);
      await probe.read(last);
      heal = last[0] !== 0x0a;
    } finally {
      probe.close();
    }
  }
  let chain = Promise.resolve();
  return {
    append(record) {
      const bytes = enc.encode((heal ? "\n" : "") + JSON.stringify(record) + "\n");
      heal = false;
      const next = chain.then(async () => {
        const n = await file.write(bytes);
        if (n !== bytes.length) {
          throw new PenguinError("runtime", `batch: short write to the results file "${path}"`);
        }
      });
      chain = next.catch(() => {});
      return next;
    },
    close: () => file.close(),
  };
}

/** A claim on running (a shard of) the batch recorded in one results file. */
export interface BatchClaim {
  release(): void;
}

async function tryLockFile(path: string, exclusive: boolean): Promise<Deno.FsFile | null> {
  const file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
  if (await file.tryLock(exclusive)) return file;
  file.close();
  return null;
}

/**
 * Claim the right to run `shard` (`"i/n"`; undefined: every task) of the
 * batch whose results file is `path`, so two `batch run`s never run the
 * same task at once (each would resume the other's session). The locks are
 * OS advisory locks (`flock`) on `<results>.lock` (shared by shard runs,
 * exclusive for a run of every task) and `<results>.shard-<i>-of-<n>.lock`;
 * a killed process's locks go with it. Throws a `locked` error naming the
 * lock when another process holds the claim.
 */
export async function claimBatch(path: string, shard: string | undefined): Promise<BatchClaim> {
  const held: Deno.FsFile[] = [];
  const release = () => held.splice(0).forEach((f) => f.close());
  const busy = (lock: string) =>
    new PenguinError(
      "locked",
      `batch run: another batch run is running ${
        shard === undefined ? "tasks" : `shard ${shard}`
      } of "${path}" (it holds "${lock}"); wait for it to end, or give this run its own --results`,
    );
  try {
    const all = `${path}.lock`;
    const whole = await tryLockFile(all, shard === undefined);
    if (whole === null) throw busy(all);
    held.push(whole);
    if (shard !== undefined) {
      const [i, n] = shard.split("/");
      const own = `${path}.shard-${i}-of-${n}.lock`;
      const one = await tryLockFile(own, true);
      if (one === null) throw busy(own);
      held.push(one);
    }
    return { release };
  } catch (err) {
    release();
    if (err instanceof PenguinError) throw err;
    throw new PenguinError(
      "runtime",
      `batch: cannot lock the results file "${path}": ${(err as Error).message}`,
    );
  }
}
