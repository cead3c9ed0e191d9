/**
 * Muster's errors. Every error has a stable `code` (listed in docs/errors.md; a test keeps the list,
 * the classes and the doc in sync) and is recognised across duplicate copies of this package by a
 * `Symbol.for` brand, so `MusterError.is(err)` works where `instanceof` would not.
 */
const brand = Symbol.for('muster.error');

export type ErrorCode =
  | 'MUSTER_CONFIG'
  | 'MUSTER_ADAPTER_NOT_FOUND'
  | 'MUSTER_ADAPTER_LOAD'
  | 'MUSTER_ADAPTER_INVALID'
  | 'MUSTER_ADAPTER_VERSION'
  | 'MUSTER_ADAPTER_START'
  | 'MUSTER_PORT_NOT_CONFIGURED'
  | 'MUSTER_LOCK_LOST'
  | 'MUSTER_TIMEOUT'
  | 'MUSTER_ABORTED'
  | 'MUSTER_CLOSED'
  | 'MUSTER_BACKEND'
  | 'MUSTER_PAYLOAD_TOO_LARGE'
  | 'MUSTER_SUPERSEDED'
  | 'MUSTER_INVALID_ARGUMENT';

export class MusterError extends Error {
  readonly code: ErrorCode;
  readonly [brand] = true;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }

  /** True for any Muster error (optionally of `code`), even from another copy of this package. */
  static is(value: unknown, code?: ErrorCode): value is MusterError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as { [brand]?: unknown })[brand] === true &&
      (code === undefined || (value as MusterError).code === code)
    );
  }
}

/** Where in a config document a problem is. `file` is absent for a config passed as an object. */
export interface SourcePosition {
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  /** Set outside any document: the environment variable or command-line flag that gave the value. */
  readonly setting?: string;
}

/** A config document that cannot be used; the message starts with `file:line:col`. */
export class ConfigError extends MusterError {
  readonly path: string;
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(path: string, problem: string, position: SourcePosition = {}, options?: { cause?: unknown }) {
    const where =
      position.setting ??
      (position.file ? `${position.file}${position.line ? `:${position.line}:${position.column ?? 1}` : ''}` : '(config object)');
    super('MUSTER_CONFIG', `${where}: ${path ? `${path}: ` : ''}${problem}`, options);
    this.path = path;
    this.file = position.file;
    this.line = position.line;
    this.column = position.column;
  }
}

export class AdapterNotFoundError extends MusterError {
  readonly specifier: string;
  constructor(specifier: string, message: string, options?: { cause?: unknown }) {
    super('MUSTER_ADAPTER_NOT_FOUND', message, options);
    this.specifier = specifier;
  }
}

export class AdapterLoadError extends MusterError {
  readonly specifier: string;
  constructor(specifier: string, message: string, options?: { cause?: unknown }) {
    super('MUSTER_ADAPTER_LOAD', message, options);
    this.specifier = specifier;
  }
}

/** A module loaded but does not export a usable adapter definition. */
export class AdapterInvalidError extends MusterError {
  readonly specifier: string;
  constructor(specifier: string, message: string) {
    super('MUSTER_ADAPTER_INVALID', message);
    this.specifier = specifier;
  }
}

/** An adapter's factory failed while creating its port with something other than a MusterError. */
export class AdapterStartError extends MusterError {
  readonly specifier: string;
  constructor(specifier: string, message: string, options?: { cause?: unknown }) {
    super('MUSTER_ADAPTER_START', message, options);
    this.specifier = specifier;
  }
}

/** The adapter declares (`core:` in defineAdapter) a range of @muster/core that this one is not in. */
export class AdapterVersionError extends MusterError {
  readonly specifier: string;
  /** The range the adapter declares. */
  readonly range: string;
  /** The version of @muster/core that loaded it. */
  readonly coreVersion: string;
  constructor(specifier: string, range: string, coreVersion: string, options?: { cause?: unknown; where?: string }) {
    super(
      'MUSTER_ADAPTER_VERSION',
      `${options?.where ? `${options.where}: ` : ''}adapter '${specifier}' was built for @muster/core ${range}, but this is @muster/core ${coreVersion}: install a version of the adapter built for ${coreVersion} (or the @muster/core it asks for); \`npm ls @muster/core\` shows which copies are installed`,
      options,
    );
    this.specifier = specifier;
    this.range = range;
    this.coreVersion = coreVersion;
  }
}

export class PortNotConfiguredError extends MusterError {
  constructor(port: string) {
    super('MUSTER_PORT_NOT_CONFIGURED', `no adapter is configured for ${port}: add a '${port}:' section with an 'adapter:' key`);
  }
}

/** The lease can no longer be guaranteed; stop the work it protects. */
export class LockLostError extends MusterError {
  readonly lockName: string;
  constructor(lockName: string, reason: string, options?: { cause?: unknown }) {
    super('MUSTER_LOCK_LOST', `lock '${lockName}' lost: ${reason}`, options);
    this.lockName = lockName;
  }
}

export class TimeoutError extends MusterError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('MUSTER_TIMEOUT', message, options);
  }
}

export class AbortError extends MusterError {
  constructor(message = 'the operation was aborted', options?: { cause?: unknown }) {
    super('MUSTER_ABORTED', message, options);
  }
}

export class ClosedError extends MusterError {
  constructor(what: string) {
    super('MUSTER_CLOSED', `${what} is closed`);
  }
}

/** The backend refused or failed; `status` is its HTTP status where it has one. */
export class BackendError extends MusterError {
  readonly backend: string;
  readonly status: number | undefined;
  constructor(backend: string, message: string, options?: { status?: number; cause?: unknown }) {
    super('MUSTER_BACKEND', `${backend}: ${message}`, options);
    this.backend = backend;
    this.status = options?.status;
  }
}

export class PayloadTooLargeError extends MusterError {
  readonly size: number;
  readonly limit: number;
  constructor(what: string, size: number, limit: number) {
    super('MUSTER_PAYLOAD_TOO_LARGE', `${what} is ${size} bytes of JSON, over the limit of ${limit}; send less, or raise maxPayloadBytes`);
    this.size = size;
    this.limit = limit;
  }
}

/** A newer incarnation of the member has written its heartbeat; this process must stop beating for it. */
export class SupersededError extends MusterError {
  readonly memberId: string;
  /** The incarnation that took the member over. */
  readonly theirs: string;
  constructor(memberId: string, mine: string, theirs: string) {
    super(
      'MUSTER_SUPERSEDED',
      `member '${memberId}' is now written by a newer incarnation (${theirs}, this process is ${mine}); stop this process or use another member id`,
    );
    this.memberId = memberId;
    this.theirs = theirs;
  }
}

export class InvalidArgumentError extends MusterError {
  constructor(message: string) {
    super('MUSTER_INVALID_ARGUMENT', message);
  }
}

/** Turns an abort reason into our AbortError, keeping our own errors (e.g. a timeout) as they are. */
export function abortErrorFrom(signal: AbortSignal, what = 'the operation'): MusterError {
  const reason: unknown = signal.reason;
  if (MusterError.is(reason)) return reason;
  return new AbortError(`${what} was aborted`, { cause: reason });
}
