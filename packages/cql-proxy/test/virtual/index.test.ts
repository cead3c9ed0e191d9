import { describe, expect, it } from '@jest/globals';
import * as virtual from '../../src/virtual/index.js';

describe('the virtual cluster entry point', () => {
  it('exports each part', () => {
    for (const name of [
      'deriveMembership',
      'advanceView',
      'assignTokens',
      'hostIdFor',
      'isSystemTableQuery',
      'parseSystemQuery',
      'selectSystemTable',
      'preparedShape',
      'systemSchemas',
      'diffViews',
      'MembershipTracker',
    ]) {
      expect(typeof (virtual as Record<string, unknown>)[name]).toBe('function');
    }
  });
});
