/**
 * Sessions as computed from their trace files alone: the resume replay,
 * locating and listing sessions, and fork, clone, import, delete and tree;
 * the scheduled firings the traces record.
 *
 * @module
 */
export {
  createReplay,
  type DanglingCompaction,
  INTERRUPTED_OUTPUT,
  type Replay,
  replayCompactability,
  type ReplayMessage,
  type ResumeReplay,
  resumeTrace,
} from "./replay.ts";
export { contextSummaryText, extractSummary } from "./summary.ts";
export { agentsWithTraces } from "../trace/layout.ts";
export {
  isPathTarget,
  latestSessionId,
  type LocatedSession,
  locateInRoot,
  type LocateOptions,
  locateSession,
  sessionIdMatches,
  type SessionScope,
} from "./locate.ts";
export {
  closeDanglingCompaction,
  type LoadedSession,
  loadSessionForResume,
  missingWorkspaceError,
  type RecordAppender,
  type ResumeFile,
  type ResumeTarget,
} from "./resume.ts";
export {
  buildOutline,
  cutAfterAnswer,
  cutBefore,
  type CutPoint,
  type OutlineItem,
  type OutlineKind,
  promptItem,
  type SessionOutline,
  wholeBlockTag,
} from "./outline.ts";
export { countTurns, type ListOptions, listSessions, type SessionSummary } from "./list.ts";
export {
  type CloneOptions,
  cloneSession,
  continueCommands,
  type CopiedSession,
  type ForkOptions,
  forkSession,
} from "./fork.ts";
export {
  type ImportCommonOptions,
  type ImportedFile,
  importedPenguin,
  type ImportedSession,
  type ImportOptions,
  type ImportReport,
  importTraces,
} from "./import.ts";
export {
  detectFormat,
  type ForeignImported,
  type ForeignImportedSession,
  foreignImportLine,
  type ForeignImportOptions,
  type ForeignImportReport,
  formatForeignImport,
  importedForeign,
  importForeign,
} from "./import_foreign.ts";
export {
  chooseImportWorkspace,
  type ImportWorkspace,
  importWorkspaceNote,
  type ImportWorkspaceSource,
} from "./import_workspace.ts";
export { type ForeignSession, type Harness, HARNESSES } from "./foreign_session.ts";
export { type LossEntry } from "./import_report.ts";
export {
  childCount,
  type DeleteOptions,
  type DeletePlan,
  deleteSession,
  flattenPlan,
  planDelete,
} from "./delete.ts";
export { sessionTree, type TreeNode, type TreeOptions, type TreeRelation } from "./tree.ts";
export {
  flatLine,
  formatOutline,
  formatSessionList,
  formatTree,
  localTime,
  sessionListParts,
  shortCount,
  treeParts,
} from "./render.ts";
export {
  firedSlots,
  type Firing,
  parseScheduledTaskText,
  SCHEDULED_TASK_TAG,
  scheduledTaskText,
  slotKey,
} from "./scheduled_firings.ts";
