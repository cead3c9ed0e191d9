/**
 * The part of npm's semver ranges an adapter needs to say which cores it was built for: `^1.2.3`,
 * `~1.2` (partial versions allowed), comparators `>=1.2.3 <2.0.0` (full versions), an exact
 * `1.2.3`, `*`, and alternatives joined by `||`. Written here instead of importing `semver`, which
 * costs a cold start about half of the YAML parser's, for a check every createMuster runs.
 * Prerelease versions sort below their release; ranges themselves name no prereleases.
 */
type Triple = readonly [number, number, number];
type Test = (v: Version) => boolean;

export interface Version {
  readonly triple: Triple;
  readonly prerelease: boolean;
}

const number = '(0|[1-9]\\d*)';
const fullVersion = new RegExp(`^${number}\\.${number}\\.${number}(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$`);
const partialVersion = new RegExp(`^${number}(?:\\.${number}(?:\\.${number})?)?$`);

export function parseVersion(text: string): Version | undefined {
  const m = fullVersion.exec(text.trim());
  if (!m) return undefined;
  return { triple: [Number(m[1]), Number(m[2]), Number(m[3])], prerelease: m[4] !== undefined };
}

function compareTriple(a: Triple, b: Triple): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

function compare(v: Version, t: Triple): number {
  return compareTriple(v.triple, t) || (v.prerelease ? -1 : 0);
}

/** From `low` (inclusive) to below `high`, and below its prereleases too (npm's `<2.0.0-0`). */
const between =
  (low: Triple, high: Triple): Test =>
  (v) =>
    compare(v, low) >= 0 && compareTriple(v.triple, high) < 0;

function comparator(token: string): Test | undefined {
  if (token === '*' || token === 'x') return () => true;
  const m = /^(\^|~|>=|<=|>|<|=)?(.+)$/.exec(token)!;
  const op = m[1] ?? '';
  const partial = partialVersion.exec(m[2]!);
  if (!partial) return undefined;
  const given = partial
    .slice(1)
    .filter((p) => p !== undefined)
    .map(Number);
  const [major, minor = 0, patch = 0] = given as [number, number?, number?];
  const low: Triple = [major, minor, patch];
  if (op === '^') {
    // The left-most non-zero part of what was written may not change.
    if (major > 0 || given.length === 1) return between(low, [major + 1, 0, 0]);
    if (minor > 0 || given.length === 2) return between(low, [0, minor + 1, 0]);
    return between(low, [0, 0, patch + 1]);
  }
  if (op === '~') return between(low, given.length === 1 ? [major + 1, 0, 0] : [major, minor + 1, 0]);
  if (given.length < 3) return undefined;
  switch (op) {
    case '>=':
      return (v) => compare(v, low) >= 0;
    case '>':
      return (v) => compare(v, low) > 0;
    case '<=':
      return (v) => compare(v, low) <= 0;
    case '<':
      return (v) => compare(v, low) < 0;
    default:
      return (v) => compare(v, low) === 0;
  }
}

/** A test for versions in `range`, or undefined when the range is outside the syntax above. */
export function parseRange(range: string): Test | undefined {
  const alternatives: Test[] = [];
  for (const set of range.split('||')) {
    // `>= 1.2.3` is written with a space as often as without.
    const tokens = set
      .trim()
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1')
      .split(/\s+/);
    if (tokens.length === 1 && tokens[0] === '') return undefined;
    const tests = tokens.map(comparator);
    if (tests.some((t) => t === undefined)) return undefined;
    alternatives.push((v) => tests.every((t) => t!(v)));
  }
  return (v) => alternatives.some((t) => t(v));
}
