/**
 * A small options-schema builder: validates config values with paths in every message, converts
 * durations to milliseconds, and describes itself as JSON Schema for editors. Written here rather
 * than taken from a validation library so that validating a config costs nothing at cold start
 * and adapters (ours and third parties') share one vocabulary with core.
 */
import { parseDuration } from '../duration.js';

export type Path = readonly (string | number)[];

export interface Issue {
  readonly path: Path;
  readonly message: string;
}

export type JsonSchema = { [key: string]: unknown };

export interface Schema<T> {
  /** Returns the value (converted) or undefined after pushing at least one issue. */
  parse(value: unknown, path: Path, issues: Issue[]): T | undefined;
  jsonSchema(): JsonSchema;
  readonly optional?: boolean;
  readonly fallback?: T;
  readonly description?: string;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

const show = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a map' : JSON.stringify(v);

function make<T>(parse: Schema<T>['parse'], jsonSchema: () => JsonSchema): Schema<T> {
  return { parse, jsonSchema };
}

export function formatPath(path: Path): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : out ? `.${part}` : part;
  return out;
}

function string(options: { minLength?: number; pattern?: RegExp; hint?: string } = {}): Schema<string> {
  return make(
    (v, path, issues) => {
      if (typeof v !== 'string') {
        const quote = typeof v === 'number' || typeof v === 'boolean' ? ' (YAML reads it unquoted as such: quote it to keep the text)' : '';
        return void issues.push({ path, message: `expected a string, got ${show(v)}${quote}` });
      }
      if (options.minLength !== undefined && v.length < options.minLength) {
        return void issues.push({
          path,
          message: options.minLength === 1 ? 'must not be empty' : `must be at least ${options.minLength} characters`,
        });
      }
      if (options.pattern && !options.pattern.test(v)) {
        return void issues.push({ path, message: `${JSON.stringify(v)} is not ${options.hint ?? `of the form ${options.pattern}`}` });
      }
      return v;
    },
    () => ({
      type: 'string',
      ...(options.minLength ? { minLength: options.minLength } : {}),
      ...(options.pattern ? { pattern: options.pattern.source } : {}),
    }),
  );
}

/** The text form of an integer or a boolean, as a quoted YAML value or an environment reference gives it. */
const integerText = /^-?\d+$/;

function integer(options: { min?: number; max?: number } = {}): Schema<number> {
  return make(
    (value, path, issues) => {
      const v = typeof value === 'string' && integerText.test(value) ? Number(value) : value;
      if (typeof v !== 'number' || !Number.isInteger(v)) return void issues.push({ path, message: `expected an integer, got ${show(v)}` });
      if (options.min !== undefined && v < options.min)
        return void issues.push({ path, message: `must be at least ${options.min}, got ${v}` });
      if (options.max !== undefined && v > options.max)
        return void issues.push({ path, message: `must be at most ${options.max}, got ${v}` });
      return v;
    },
    () => ({
      type: 'integer',
      ...(options.min !== undefined ? { minimum: options.min } : {}),
      ...(options.max !== undefined ? { maximum: options.max } : {}),
    }),
  );
}

function boolean(): Schema<boolean> {
  return make(
    (value, path, issues) => {
      const v = value === 'true' ? true : value === 'false' ? false : value;
      return typeof v === 'boolean' ? v : void issues.push({ path, message: `expected true or false, got ${show(v)}` });
    },
    () => ({ type: 'boolean' }),
  );
}

/** `10s`, `500ms`, `2m`, `1h`, or a number of milliseconds; parsed to milliseconds. */
function duration(options: { min?: number } = {}): Schema<number> {
  return make(
    (v, path, issues) => {
      const ms = typeof v === 'number' || typeof v === 'string' ? parseDuration(v) : undefined;
      if (ms === undefined) return void issues.push({ path, message: `expected a duration such as 500ms, 10s or 2m, got ${show(v)}` });
      if (options.min !== undefined && ms < options.min)
        return void issues.push({ path, message: `must be at least ${options.min} ms, got ${ms} ms` });
      return ms;
    },
    () => ({
      oneOf: [
        { type: 'string', pattern: '^\\d+(\\.\\d+)?(ms|s|m|h)$' },
        { type: 'number', minimum: 0 },
      ],
    }),
  );
}

function literal<const T extends string | number>(...values: T[]): Schema<T> {
  return make(
    (v, path, issues) =>
      values.includes(v as T)
        ? (v as T)
        : void issues.push({ path, message: `expected one of ${values.map((x) => JSON.stringify(x)).join(', ')}, got ${show(v)}` }),
    () => ({ enum: values }),
  );
}

function array<T>(item: Schema<T>, options: { minItems?: number } = {}): Schema<T[]> {
  return make(
    (v, path, issues) => {
      if (!Array.isArray(v)) return void issues.push({ path, message: `expected a list, got ${show(v)}` });
      if (options.minItems !== undefined && v.length < options.minItems) {
        return void issues.push({ path, message: `expected at least ${options.minItems} item${options.minItems === 1 ? '' : 's'}` });
      }
      const before = issues.length;
      const out = v.map((x, i) => item.parse(x, [...path, i], issues));
      return issues.length === before ? (out as T[]) : undefined;
    },
    () => ({ type: 'array', items: item.jsonSchema(), ...(options.minItems ? { minItems: options.minItems } : {}) }),
  );
}

type Shape = Record<string, Schema<unknown>>;
type OptionalKeys<S extends Shape> = { [K in keyof S]: S[K] extends { optional: true } ? K : never }[keyof S];
export type ObjectOf<S extends Shape> = { [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & {
  [K in OptionalKeys<S>]?: Infer<S[K]>;
};

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A map with known keys; unknown keys are an error (a typo must not be silently ignored). */
function object<S extends Shape>(shape: S, options: { unknownKeys?: 'error' | 'allow' } = {}): Schema<ObjectOf<S>> {
  return make(
    (v, path, issues) => {
      if (v === undefined || v === null) v = {};
      if (!isPlainObject(v)) return void issues.push({ path, message: `expected a map, got ${show(v)}` });
      const before = issues.length;
      const out: Record<string, unknown> = {};
      if (options.unknownKeys !== 'allow') {
        for (const key of Object.keys(v)) {
          if (!(key in shape)) {
            issues.push({ path: [...path, key], message: `unknown key; expected one of ${Object.keys(shape).join(', ') || '(none)'}` });
          }
        }
      }
      for (const [key, schema] of Object.entries(shape)) {
        const value = v[key];
        if (value === undefined) {
          if (schema.fallback !== undefined) out[key] = schema.fallback;
          else if (!schema.optional) issues.push({ path: [...path, key], message: 'is required' });
          continue;
        }
        const parsed = schema.parse(value, [...path, key], issues);
        if (parsed !== undefined) out[key] = parsed;
      }
      return issues.length === before ? (out as ObjectOf<S>) : undefined;
    },
    () => ({
      type: 'object',
      properties: Object.fromEntries(
        Object.entries(shape).map(([k, s]) => [
          k,
          {
            ...s.jsonSchema(),
            ...(s.description ? { description: s.description } : {}),
            ...(s.fallback !== undefined ? { default: s.fallback } : {}),
          },
        ]),
      ),
      required: Object.entries(shape)
        .filter(([, s]) => !s.optional && s.fallback === undefined)
        .map(([k]) => k),
      additionalProperties: options.unknownKeys === 'allow',
    }),
  );
}

/** A map of string keys to values of one schema (labels, metadata). */
function record<T>(value: Schema<T>): Schema<Record<string, T>> {
  return make(
    (v, path, issues) => {
      if (!isPlainObject(v)) return void issues.push({ path, message: `expected a map, got ${show(v)}` });
      const before = issues.length;
      const out: Record<string, T> = {};
      for (const [k, x] of Object.entries(v)) {
        const parsed = value.parse(x, [...path, k], issues);
        if (parsed !== undefined) out[k] = parsed;
      }
      return issues.length === before ? out : undefined;
    },
    () => ({ type: 'object', additionalProperties: value.jsonSchema() }),
  );
}

/** The first alternative that accepts the value; the error lists what each expected. */
function union<T extends unknown[]>(...alternatives: { [K in keyof T]: Schema<T[K]> }): Schema<T[number]> {
  return make(
    (v, path, issues) => {
      const tried: string[] = [];
      for (const alt of alternatives) {
        const local: Issue[] = [];
        const parsed = alt.parse(v, path, local);
        if (local.length === 0) return parsed;
        tried.push(...local.filter((i) => i.path.length === path.length).map((i) => i.message));
      }
      issues.push({ path, message: [...new Set(tried)].join('; or ') || `unexpected ${show(v)}` });
      return undefined;
    },
    () => ({ anyOf: alternatives.map((a) => a.jsonSchema()) }),
  );
}

/** Any value, unchecked (an application's own section validated elsewhere). */
function unknown(): Schema<unknown> {
  return make(
    (v) => v,
    () => ({}),
  );
}

function optional<T>(schema: Schema<T>): Schema<T> & { optional: true } {
  return { ...schema, optional: true };
}

function withDefault<T>(schema: Schema<T>, fallback: NoInfer<T>): Schema<T> {
  return { ...schema, fallback };
}

function describe<T>(schema: Schema<T>, description: string): Schema<T> {
  return { ...schema, description };
}

/**
 * A value that must never be shown: effective configs print it as `<redacted>` (see redactSecrets,
 * which finds it by the JSON Schema's `writeOnly`), and its validation errors never echo it.
 */
function secret<T>(schema: Schema<T>): Schema<T> {
  return {
    ...schema,
    parse(v, path, issues) {
      const local: Issue[] = [];
      const parsed = schema.parse(v, path, local);
      // A string shows quoted in messages; anything else as its text, as a whole word.
      const text = typeof v === 'string' ? JSON.stringify(v) : typeof v === 'object' && v !== null ? undefined : String(v);
      const what = v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a map' : `a ${typeof v}`;
      const hidden = `${what} (not shown: secret)`;
      const escaped = text?.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      for (const issue of local) {
        const message = escaped ? issue.message.replace(new RegExp(`(?<![\\w.])${escaped}(?![\\w.])`, 'g'), () => hidden) : issue.message;
        issues.push({ path: issue.path, message });
      }
      return parsed;
    },
    jsonSchema: () => ({ ...schema.jsonSchema(), writeOnly: true }),
  };
}

export const s = {
  string,
  integer,
  boolean,
  duration,
  literal,
  array,
  object,
  record,
  union,
  unknown,
  optional,
  withDefault,
  describe,
  secret,
};

/** Validates `value` and returns it, or the list of issues. */
export function validate<T>(schema: Schema<T>, value: unknown, path: Path = []): { value: T } | { issues: Issue[] } {
  const issues: Issue[] = [];
  const parsed = schema.parse(value, path, issues);
  return issues.length > 0 ? { issues } : { value: parsed as T };
}
