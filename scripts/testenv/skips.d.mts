// Types for skips.mjs.
export const SKIP_LOG_VARIABLE: string;
export function recordSkip(server: string): void;
