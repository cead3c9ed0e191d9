// Types for drivers.mjs, so TypeScript tests can import it.

export const PYTHON_DRIVER_VERSION: string;
export const JAVA_DRIVER_VERSION: string;
export const JAVA_DRIVER3_VERSION: string;
/** Whether `cmd args` runs and exits 0. */
export function hasTool(cmd: string, args?: string[]): boolean;
/** Installs (once) and returns the venv python that has cassandra-driver. */
/** The compression modules (pinned) the Python driver loads for lz4 and snappy. */
export const PYTHON_COMPRESSION: readonly string[];
export function pythonDriver(options?: { extras?: readonly string[] }): Promise<{ python: string; version: string }>;
/** Fetches (once) and returns the folder of java-driver-core's runtime jars. */
export function javaDriverJars(): Promise<{ dir: string; version: string }>;
/** Fetches (once) and returns the folder of the Java driver 3.x's runtime jars (cassandra-driver-core, lz4-java, snappy-java). */
export function javaDriver3Jars(): Promise<{ dir: string; version: string }>;
