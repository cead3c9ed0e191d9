/** A CQL identifier as given (case kept), double-quoted so any name is taken literally. */
export function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
