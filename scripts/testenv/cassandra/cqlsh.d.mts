// Types for cqlsh.mjs, so TypeScript tests can import it.
export const CQLSH_VERSION: string;
/** Absolute path of the cached cqlsh launcher; pip-installs it into the testenv cache first if needed. */
export function cqlshPath(): Promise<string>;
