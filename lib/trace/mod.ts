/**
 * The append-only trace store: file paths and the data-root layout, the
 * per-session writer and its lock, the line splitter, the streaming reader,
 * session file grouping and child lookup, and trace validation.
 *
 * @module
 */
export {
  assertSessionId,
  dateDirName,
  findLatestTraceFile,
  isDateDirName,
  listSessionFiles,
  parseTraceFileName,
  traceFileName,
  traceFilePath,
  type TraceFileRef,
  tracesDirOf,
} from "./paths.ts";
export {
  agentIdOf,
  agentsWithTraces,
  nextShardPath,
  projectConfigPathOf,
  relativesDirOf,
  relativesDirsOf,
  sessionFilesIn,
  tracesDirsOfRoot,
  walkTraceFiles,
} from "./layout.ts";
export {
  type BytesLine,
  decodeLine,
  type FollowedLine,
  followLines,
  forEachLine,
  type Line,
  type LineFollower,
  linesWith,
  type LongLine,
  MAX_LINE_BYTES,
  openTrace,
  readAt,
  readFirstLine,
  readLines,
  type ReadLinesOptions,
  type TextLine,
  textLines,
  textLinesFromEnd,
} from "./lines.ts";
export {
  findRelative,
  groupSessions,
  readSessionMeta,
  type RelativesCache,
  type SessionFiles,
  type TraceFile,
} from "./session_files.ts";
export {
  type FsyncPolicy,
  openTraceWriter,
  type TraceObserver,
  type TraceWriter,
  type TraceWriterOptions,
} from "./writer.ts";
export {
  acquireSessionLock,
  type LiveSession,
  liveSessions,
  type LockHolder,
  releaseSessionLock,
  type SessionLock,
  sessionLockPath,
} from "./lock.ts";
export {
  formatProblem,
  readTrace,
  readTraceFile,
  type ReadTraceOptions,
  skippedLinesNotice,
  type TraceFileContents,
  type TraceProblem,
  type TraceProblemKind,
  type TraceRecord,
} from "./reader.ts";
export {
  expandTracePaths,
  type FileValidation,
  type ValidateOptions,
  validateTraceFile,
  validateTraceFiles,
  type ValidationReport,
} from "./validate.ts";
