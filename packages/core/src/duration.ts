import { InvalidArgumentError } from './errors.js';

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const pattern = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;

/** A duration as written in config: milliseconds as a number, or `500ms`, `10s`, `1.5m`, `1h`. */
export type Duration = number | string;

/** Parses a duration to milliseconds; returns undefined for a malformed one. */
export function parseDuration(value: Duration): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  const match = pattern.exec(value.trim());
  if (!match) return undefined;
  return Math.round(Number(match[1]) * units[match[2]!]!);
}

export function toMillis(value: Duration, what: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) {
    throw new InvalidArgumentError(`${what}: expected a duration such as 500ms, 10s or 2m, or milliseconds; got ${JSON.stringify(value)}`);
  }
  return ms;
}
