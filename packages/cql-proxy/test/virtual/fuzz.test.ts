import { describe, expect, it } from '@jest/globals';
import { deriveMembership } from '../../src/virtual/membership.js';
import { isSystemTableQuery, parseSystemQuery } from '../../src/virtual/system-query.js';
import { selectSystemTable } from '../../src/virtual/system-select.js';
import { systemSchemas } from '../../src/virtual/system-tables.js';
import { advanceView } from '../../src/virtual/view.js';
import { endpoint, heartbeat, options } from './fixtures.js';

/** A small deterministic generator (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pieces = [
  'SELECT',
  '*',
  'FROM',
  'system',
  '.',
  'local',
  'peers',
  'peers_v2',
  'WHERE',
  'key',
  'peer',
  'peer_port',
  '=',
  "'local'",
  "'10.0.0.1'",
  '?',
  ':address',
  'AND',
  'LIMIT',
  '1',
  '-1',
  'ALLOW',
  'FILTERING',
  'USING',
  'TIMEOUT',
  '5s',
  'count',
  '(',
  ')',
  ',',
  'AS',
  'x',
  '"q"',
  ';',
  '--',
  '\n',
  '/*',
  '*/',
  "'",
  '"',
  '$$',
  '0x',
  'e',
  'IN',
  '<',
  'null',
  'true',
  '1.5',
  ':',
  '550e8400-e29b-41d4-a716-446655440000',
];

describe('hostile statements', () => {
  it('never make the parser or the evaluator throw', () => {
    const next = random(42);
    const view = advanceView(
      undefined,
      deriveMembership(
        {
          self: { id: 'a', nativePort: 9042 },
          endpoints: [endpoint('a', '10.0.0.1'), endpoint('b', '10.0.0.2')],
          heartbeats: [heartbeat('a'), heartbeat('b')],
        },
        options,
      ),
    );
    const ctx = { view, backendLocal: {}, schemas: systemSchemas() };
    let answered = 0;
    for (let i = 0; i < 4_000; i++) {
      const n = 1 + Math.floor(next() * 14);
      const words = Array.from({ length: n }, () => pieces[Math.floor(next() * pieces.length)] ?? '');
      const cql = (next() < 0.7 ? ['SELECT', '*', 'FROM', 'system.peers', ...words] : words).join(next() < 0.5 ? ' ' : '');
      expect(() => isSystemTableQuery(cql)).not.toThrow();
      const parsed = parseSystemQuery(cql);
      if (!parsed.ok) {
        expect(parsed.message.length).toBeGreaterThan(0);
        continue;
      }
      const values = parsed.query.markers.map(() =>
        Buffer.from(Array.from({ length: Math.floor(next() * 17) }, () => Math.floor(next() * 256))),
      );
      const result = selectSystemTable(parsed.query, ctx, { values });
      answered += result.ok ? 1 : 0;
    }
    expect(answered).toBeGreaterThan(0);
  });
});
