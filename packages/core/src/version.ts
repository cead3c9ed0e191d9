/**
 * This package's version, for the adapters' core-range check. A constant rather than a read of
 * package.json, so a bundle (which has no package.json beside it) checks adapters too; a test keeps
 * it equal to package.json's.
 */
export const musterCoreVersion = '0.1.0';
