// Types for skip-summary-reporter.mjs, so TypeScript tests can import it.
export default class SkipSummaryReporter {
  constructor(globalConfig: { rootDir: string });
  readonly rootDir: string;
  onRunComplete(): void;
  /** The summary of what was recorded so far, or '' when nothing was skipped. */
  summary(): string;
}
