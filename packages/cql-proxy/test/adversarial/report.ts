/** One class of hostile input and what it did to the proxy. */
export interface ClassResult {
  readonly name: string;
  readonly cases: number;
  /** The proxy process exited. */
  readonly crashes: number;
  /** An answer other than the one the class expects (a forwarded request, no error, a wrong code). */
  readonly wrong: number;
  readonly rssBefore: number;
  readonly rssAfter: number;
  readonly peakRss: number;
  /** A fresh driver worked end to end afterwards. */
  readonly freshClient: boolean;
  readonly note?: string;
}

/** Prints the results as the table the issue asks for (cases, crashes, wrong answers, RSS). */
export function printTable(title: string, results: readonly ClassResult[]): void {
  const header = ['class', 'cases', 'crashes', 'wrong', 'RSS before', 'RSS after', 'peak RSS', 'fresh client', 'note'];
  const rows = results.map((r) => [
    r.name,
    String(r.cases),
    String(r.crashes),
    String(r.wrong),
    `${r.rssBefore.toFixed(0)} MiB`,
    `${r.rssAfter.toFixed(0)} MiB`,
    `${r.peakRss.toFixed(0)} MiB`,
    r.freshClient ? 'ok' : 'FAILED',
    r.note ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log([`${title}`, line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n'));
}
