// A contact point as the config admits it becomes the address the proxy dials.
import { describe, expect, it } from '@jest/globals';
import { parseHostPort } from '../../src/proxy/cql-proxy.js';

describe('parseHostPort', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1', 9042],
    ['cassandra:9142', 'cassandra', 9142],
    ['[::1]:9043', '::1', 9043],
    ['[fd00::2]', 'fd00::2', 9042],
    // Bare IPv6: the last group is part of the address, not a port.
    ['::1', '::1', 9042],
    ['fe80::1:2', 'fe80::1:2', 9042],
    ['::ffff:10.0.0.1', '::ffff:10.0.0.1', 9042],
  ])('%s dials %s port %d', (value, host, port) => {
    expect(parseHostPort(value)).toEqual({ host, port });
  });
});
