import { describe, expect, it } from '@jest/globals';
import { s, validate } from '../src/runtime/schema.js';

describe('options schema', () => {
  const schema = s.object({
    service: s.string({ minLength: 1 }),
    ttl: s.withDefault(s.duration(), 10_000),
    members: s.optional(s.array(s.object({ address: s.string(), port: s.integer({ min: 1, max: 65535 }) }))),
  });

  it('converts durations and fills defaults', () => {
    expect(validate(schema, { service: 'a' })).toEqual({ value: { service: 'a', ttl: 10_000 } });
    expect(validate(schema, { service: 'a', ttl: '1.5s' })).toEqual({ value: { service: 'a', ttl: 1500 } });
  });

  it('names the path of every problem', () => {
    const result = validate(schema, {
      ttl: 'soon',
      members: [
        { address: 'x', port: 1 },
        { address: 'y', port: 70000 },
      ],
      extra: 1,
    });
    expect('issues' in result && result.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['extra', 'unknown key; expected one of service, ttl, members'],
      ['service', 'is required'],
      ['ttl', 'expected a duration such as 500ms, 10s or 2m, got "soon"'],
      ['members.1.port', 'must be at most 65535, got 70000'],
    ]);
  });

  it('describes itself as JSON Schema', () => {
    expect(schema.jsonSchema()).toMatchObject({ type: 'object', required: ['service'], additionalProperties: false });
  });
});
