// Types for state.mjs, so TypeScript tests can import it.

/** A running server's entry in the state file; each server module defines its own fields. */
export type ServerEntry = { pids: number[]; logs: string[] } & Record<string, unknown>;

export function stateFile(): string;
export function readState(): Record<string, ServerEntry>;
export function putEntry(name: string, entry: ServerEntry): void;
export function dropEntry(name: string): void;
/** The running server `name`, or undefined when it is not up (throws under CI=true instead). */
export function testServer<T extends object = ServerEntry>(name: string): (T & ServerEntry) | undefined;
