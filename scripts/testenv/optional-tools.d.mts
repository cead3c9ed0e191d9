// Types for optional-tools.mjs, so TypeScript tests can import it.
export type OptionalTool =
  'java-driver' | 'python-driver' | 'gocql' | 'gocql2' | 'cqlsh' | 'openssl' | 'k8s-elector' | 'cassandra-cache' | 'rust-driver';
export const OPTIONAL_TOOLS: Record<OptionalTool, { present(): boolean; why: string; how: string; builtOnRequest?: boolean }>;
/**
 * Whether the tool is there; when not, the skip is recorded (locally) or thrown (CI=true). `optOut`
 * names a variable that, set to `off`, turns the tool off for the calling file (listed, not failing CI).
 */
export function testTool(name: OptionalTool, options?: { optOut?: string }): boolean;
