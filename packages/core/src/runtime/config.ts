import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Document, LineCounter } from 'yaml';
import { ConfigError, type SourcePosition } from '../errors.js';
import { formatPath, validate, type Issue, type Path, type Schema } from './schema.js';

export type PortName = 'discovery' | 'lock' | 'heartbeat';
export const portNames: readonly PortName[] = ['discovery', 'lock', 'heartbeat'];

export interface PortSection {
  /** `static`, `kubernetes`, `consul`, an npm package name, or a path starting with `./` or `/`. */
  readonly adapter: string;
  readonly options?: Record<string, unknown>;
}

/** A config as an object. Applications add their own top-level sections beside the ports. */
export interface MusterConfig {
  readonly version?: 1;
  readonly discovery?: PortSection;
  readonly lock?: PortSection;
  readonly heartbeat?: PortSection;
  readonly [section: string]: unknown;
}

export const supportedVersion = 1;

/**
 * A loaded config and where each value came from, so every later check (an adapter's options,
 * an application's own section) can report `file:line:col` and the path.
 */
export class ConfigSource {
  readonly file: string | undefined;
  /** Relative adapter paths resolve from here: the config file's folder, else the working directory. */
  readonly dir: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly #doc: Document | undefined;
  readonly #lines: LineCounter | undefined;

  constructor(data: Record<string, unknown>, origin: { file?: string; dir: string; doc?: Document; lines?: LineCounter }) {
    this.data = data;
    this.file = origin.file;
    this.dir = origin.dir;
    this.#doc = origin.doc;
    this.#lines = origin.lines;
  }

  positionOf(path: Path): SourcePosition {
    if (!this.#doc || !this.#lines) return { file: this.file };
    for (let n = path.length; n >= 0; n--) {
      const node = n === 0 ? this.#doc.contents : this.#doc.getIn(path.slice(0, n), true);
      const range = (node as { range?: [number, number, number] } | undefined)?.range;
      if (range) {
        const { line, col } = this.#lines.linePos(range[0]);
        return { file: this.file, line, column: col };
      }
    }
    return { file: this.file };
  }

  error(path: Path, problem: string, options?: { cause?: unknown }): ConfigError {
    return new ConfigError(formatPath(path), problem, this.positionOf(path), options);
  }

  /** One error for a list of issues: positioned at the first, listing the rest in the message. */
  issuesError(issues: readonly Issue[]): ConfigError {
    const [first, ...rest] = issues;
    const more = rest.map((i) => {
      const pos = this.positionOf(i.path);
      return `\n  also ${pos.line ? `${pos.line}:${pos.column} ` : ''}${formatPath(i.path)}: ${i.message}`;
    });
    return this.error(first!.path, first!.message + more.join(''));
  }

  /** Validates the value at `path` with `schema`, throwing a positioned ConfigError. */
  parse<T>(path: Path, schema: Schema<T>): T {
    let value: unknown = this.data;
    for (const part of path) value = (value as Record<string | number, unknown> | undefined)?.[part];
    const result = validate(schema, value, path);
    if ('issues' in result) throw this.issuesError(result.issues);
    return result.value;
  }
}

export interface LoadOptions {
  /** Environment for `${VAR}` and `${VAR:-default}` in a YAML file (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  /** What the file must hold, for the message when it is not a map (default: the sections of a Muster config). */
  readonly document?: string;
}

/** Reads a YAML file (path or file: URL), or wraps a config object; an already loaded source passes through. */
export async function loadConfig(input: string | URL | MusterConfig | ConfigSource, options: LoadOptions = {}): Promise<ConfigSource> {
  if (input instanceof ConfigSource) return input;
  const cwd = options.cwd ?? process.cwd();
  if (typeof input !== 'string' && !(input instanceof URL)) {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new ConfigError('', `expected a config object or a file path, got ${input === null ? 'null' : typeof input}`);
    }
    return new ConfigSource({ ...input }, { dir: cwd });
  }
  if (input instanceof URL && input.protocol !== 'file:') {
    throw new ConfigError('', `a config URL must be a file: URL, got ${input.protocol} (${input.href})`);
  }
  const file = input instanceof URL ? fileURLToPath(input) : resolve(cwd, input);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (cause as Error).message;
    throw new ConfigError('', `cannot read config: ${why}`, { file }, { cause });
  }
  return parseYaml(text, file, options.env ?? process.env, options.document);
}

function retype(text: string): unknown {
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (text === 'true' || text === 'false') return text === 'true';
  return text;
}

/** Parses YAML text; `file` is what error messages name. */
export async function parseYaml(
  text: string,
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  document = 'a map of sections (discovery, lock, heartbeat, …)',
): Promise<ConfigSource> {
  // Loaded only when a file is read: a config passed as an object never pays for the parser.
  const { LineCounter, parseDocument, isScalar, visit } = await import('yaml');
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number): SourcePosition => {
    const { line, col } = lines.linePos(offset);
    return { file, line, column: col };
  };
  const [syntax] = doc.errors;
  if (syntax) throw new ConfigError('', `invalid YAML: ${syntax.message.split('\n')[0]}`, at(syntax.pos[0]), { cause: syntax });

  let missing: ConfigError | undefined;
  const reference = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
  visit(doc, {
    Scalar(_key, node) {
      if (missing || !isScalar(node) || typeof node.value !== 'string' || !node.value.includes('${')) return;
      const whole = node.value.trim();
      const substituted = node.value.replace(reference, (_m, name: string, fallback?: string) => {
        const value = env[name] ?? fallback;
        if (value === undefined && !missing) {
          missing = new ConfigError(
            '',
            `environment variable ${name} is not set (write \${${name}:-default} for a default)`,
            at(node.range?.[0] ?? 0),
          );
        }
        return value ?? '';
      });
      // An unquoted value that is exactly one reference takes the type its text has, as YAML would
      // read that text (port: ${PORT} is a number). A quoted one stays text as written (a password
      // "${PW}" of 007 keeps its zeros); integer and boolean settings read their text form.
      const single = new RegExp(`^${reference.source}$`).test(whole);
      node.value = single && node.type === 'PLAIN' ? retype(substituted) : substituted;
    },
  });
  if (missing) throw missing;

  let data: unknown;
  try {
    data = doc.toJS();
  } catch (cause) {
    // The parser bounds alias expansion (a "billion laughs" document): named at the first alias.
    let alias: number | undefined;
    visit(doc, {
      Alias(_key, node) {
        alias = node.range?.[0];
        return visit.BREAK;
      },
    });
    throw new ConfigError('', `invalid YAML: ${(cause as Error).message}`, at(alias ?? 0), { cause });
  }
  const source = new ConfigSource(
    (typeof data === 'object' && data !== null && !Array.isArray(data) ? data : {}) as Record<string, unknown>,
    { file, dir: dirname(file), doc, lines },
  );
  if (data !== null && data !== undefined && (typeof data !== 'object' || Array.isArray(data))) {
    throw source.error([], `the document must be ${document}, got ${Array.isArray(data) ? 'a list' : typeof data}`);
  }
  return source;
}
