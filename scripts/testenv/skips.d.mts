// Types for skips.mjs.
export const SKIP_LOG_VARIABLE: string;
export interface Skip {
  /** A test server (npm run testenv -- up) or an optional tool (a driver, a compiler, a built binary). */
  kind: 'server' | 'tool';
  name: string;
  /** What is wrong with it here, e.g. "not running". */
  why: string;
  /** The command that provides it. */
  how: string;
}
export function recordSkip(skip: Skip): void;
/** Throws under CI=true (unless optedOut), else warns and records the skip for the summary. */
export function skipFor(skip: Skip & { optedOut?: boolean }): undefined;
