import type { CellValue } from '../protocol/cells.js';
import type { RingNode } from './token-ring.js';

/**
 * The ring from system.local and system.peers(_v2) rows, each with the address the proxy dials
 * for that node. Rows without tokens (a node still joining) or with unreadable ones are left out.
 */
export function ringNodes(
  rows: readonly { readonly host: string; readonly port: number; readonly row: Readonly<Record<string, CellValue>> }[],
): RingNode[] {
  const nodes: RingNode[] = [];
  for (const { host, port, row } of rows) {
    const tokens = row.tokens;
    if (host === '' || !Array.isArray(tokens) || tokens.length === 0) continue;
    try {
      nodes.push({
        host,
        port,
        dataCenter: String(row.data_center ?? ''),
        rack: String(row.rack ?? ''),
        tokens: tokens.map((t) => BigInt(String(t))),
      });
    } catch {
      continue;
    }
  }
  return nodes;
}
