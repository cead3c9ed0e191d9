// checkConfig validates what createMuster validates, without creating ports; secrets are found by schema.
import { describe, expect, it } from '@jest/globals';
import { checkConfig, createMuster, MusterError, redactSecrets } from '@muster/core';
import { defineAdapter, s, validate } from '@muster/core/adapter';

describe('s.secret', () => {
  const schema = s.object({ user: s.string(), password: s.optional(s.secret(s.string({ minLength: 8 }))), tokens: s.integer() });

  it('never echoes the value in an issue, whatever its type', () => {
    for (const value of [987654321, true, 'short']) {
      const result = validate(schema, { user: 'u', password: value, tokens: 1 });
      const message = 'issues' in result ? result.issues.map((i) => i.message).join() : '';
      expect(message).toMatch(/not shown: secret|must be at least 8 characters/);
      expect(message).not.toContain(String(value));
    }
  });

  it('is redacted by schema, not by key name', () => {
    expect(redactSecrets(schema, { user: 'u', password: 'p4ssword', tokens: 8 })).toEqual({ user: 'u', password: '<redacted>', tokens: 8 });
    const nested = s.object({ list: s.array(s.object({ key: s.secret(s.string()) })), map: s.record(s.secret(s.string())) });
    expect(redactSecrets(nested, { list: [{ key: 'a' }], map: { x: 'b' } })).toEqual({
      list: [{ key: '<redacted>' }],
      map: { x: '<redacted>' },
    });
  });
});

describe('checkConfig', () => {
  let created = 0;
  const counting = defineAdapter({
    name: 'counting',
    options: s.object({ members: s.array(s.string()) }),
    check: (_port, options) => {
      if (options.members.length === 0) throw new Error('no members');
      return { selfId: options.members[0] };
    },
    discovery: () => {
      created++;
      throw new Error('not in a check');
    },
  });

  it("runs the adapter's own check and returns self, creating nothing", async () => {
    const checked = await checkConfig({ discovery: { adapter: 'x', options: { members: ['a', 'b'] } } }, { adapters: { x: counting } });
    expect(checked.selfId).toBe('a');
    expect(created).toBe(0);
  });

  it('createMuster runs the same check before the factory', async () => {
    const error = await createMuster({ discovery: { adapter: 'x', options: { members: [] } } }, { adapters: { x: counting } }).catch(
      (e: unknown) => e,
    );
    expect((error as Error).message).toBe('no members');
    expect(created).toBe(0);
  });

  it('with sections given, an unknown top-level key is an error', async () => {
    const error = await checkConfig({ heartbeats: {}, proxy: {} }, { sections: ['proxy'] }).catch((e: unknown) => e);
    expect(MusterError.is(error, 'MUSTER_CONFIG')).toBe(true);
    expect((error as Error).message).toMatch(/heartbeats: unknown section; expected one of version, discovery, lock, heartbeat, proxy/);
  });
});
