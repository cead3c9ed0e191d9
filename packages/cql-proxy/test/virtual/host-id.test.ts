import { describe, expect, it } from '@jest/globals';
import { hostIdFor, hostIdName, nameBasedUuid } from '../../src/virtual/host-id.js';

describe('host ids', () => {
  it('are RFC 9562 v5 UUIDs (checked against the RFC example)', () => {
    // RFC 9562 Appendix A.4: the DNS namespace and "www.example.com".
    expect(nameBasedUuid('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
    expect(hostIdFor('prod', 'proxy-0')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('are stable: the same cluster and instance give the same id, in any process', () => {
    expect(hostIdFor('prod', 'proxy-0')).toBe(hostIdFor('prod', 'proxy-0'));
    // Pinned: a change here would make every driver see every proxy as a replaced node.
    expect(hostIdFor('prod', 'proxy-0')).toBe('9311ab13-c34a-5538-b0a7-2e20c11bf773'); // Python's uuid.uuid5 agrees
  });

  it('differ by cluster and by instance, and the canonical name cannot be confused', () => {
    const id = hostIdFor('prod', 'proxy-0');
    expect(hostIdFor('prod', 'proxy-1')).not.toBe(id);
    expect(hostIdFor('staging', 'proxy-0')).not.toBe(id);
    expect(hostIdName('a:1', 'b')).not.toBe(hostIdName('a', '1:b'));
    expect(hostIdFor('a:1', 'b')).not.toBe(hostIdFor('a', '1:b'));
  });
});
