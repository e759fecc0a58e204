/**
 * The append-only trace store: file paths, the per-session writer and its
 * lock, the streaming reader and trace validation.
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
  type FsyncPolicy,
  openTraceWriter,
  type TraceWriter,
  type TraceWriterOptions,
} from "./writer.ts";
export {
  acquireSessionLock,
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
