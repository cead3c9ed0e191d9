/** Where the Rust scylla driver check program of this source version is cached (it may not exist yet). */
export function rustDriverCheckPath(): string;
/** The path of the Rust scylla driver check program, built into the testenv cache on first use. */
export function rustDriverCheck(): Promise<string>;
