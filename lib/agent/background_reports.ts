/**
 * Waiting for background work between the runs of one task: the reports of
 * subagents started with `run_in_background` (and of background commands)
 * that finished, as the harness messages the next run sends the model.
 * `penguin run` (plain and goal mode) and the scheduler run them until
 * nothing is left to wait for.
 *
 * @module
 */
import { onAbort } from "../protocol/abort.ts";
import type { CompleteMessage } from "../protocol/types.ts";
import { noticeMessage } from "../tools/background_notice.ts";
import type { Session } from "./session.ts";

/**
 * The reports of finished background work as harness messages, waiting
 * while background subagents still run and none has reported; null when
 * nothing is left to wait for or `signal` aborts. `onWaiting` is told how
 * many subagents run before each wait.
 */
export async function nextBackgroundReports(
  session: Session,
  signal?: AbortSignal,
  onWaiting?: (running: number) => void,
): Promise<CompleteMessage[] | null> {
  let notices = session.takeBackgroundNotices();
  while (notices.length === 0 && session.hasRunningBackgroundSubagents() && !signal?.aborted) {
    const running = session.backgroundTasks().filter((t) =>
      t.kind === "subagent" && t.state === "running"
    );
    onWaiting?.(running.length);
    let unsubscribe: (() => void)[] = [];
    await new Promise<void>((resolve) => {
      unsubscribe = [session.onBackgroundNotice(() => resolve()), onAbort(signal, resolve)];
    });
    for (const off of unsubscribe) off();
    notices = session.takeBackgroundNotices();
  }
  if (notices.length === 0 || signal?.aborted) return null;
  return notices.map((n) => noticeMessage(n));
}
