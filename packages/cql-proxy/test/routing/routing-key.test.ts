import { describe, expect, it } from '@jest/globals';
import { routingKey } from '../../src/routing/routing-key.js';

describe('routingKey', () => {
  it('is the value itself for a single-column key', () => {
    const value = Buffer.from([0, 0, 0, 42]);
    expect(routingKey([value])).toBe(value);
  });

  it('lays a composite key out as [u16 length][bytes][0] per component', () => {
    const key = routingKey([Buffer.from([0, 0, 0, 1]), Buffer.from('ab'), Buffer.alloc(0)]);
    expect(key.toString('hex')).toBe('0004' + '00000001' + '00' + '0002' + '6162' + '00' + '0000' + '00');
  });
});
