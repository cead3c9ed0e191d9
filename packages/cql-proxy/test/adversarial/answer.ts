import { decodeCell, type CellValue } from '../../src/protocol/cells.js';
import { splitBody } from '../../src/protocol/envelope.js';
import { decodeError, type ErrorMessage } from '../../src/protocol/error-message.js';
import { Opcode, type Frame } from '../../src/protocol/frame.js';
import { decodeResult, type ColumnSpec } from '../../src/protocol/result.js';

/**
 * A response frame as the leak check (`leaks()` in test/proxy/system-walk.ts) reads it: its bytes,
 * and its error or its decoded rows. The rows matter: an inet cell is 4 or 16 bytes, which only the
 * decoded value shows as an address.
 */
export function answerOf(
  frame: Frame,
  version: number,
): { body: Buffer; error?: ErrorMessage; columns?: readonly ColumnSpec[]; rows?: Record<string, CellValue>[] } {
  const message = splitBody(frame).message;
  if (frame.opcode === Opcode.ERROR) return { body: frame.body, error: decodeError(message) };
  if (frame.opcode !== Opcode.RESULT) return { body: frame.body };
  const result = decodeResult(message, version);
  if (result.kind !== 'Rows') return { body: frame.body };
  const columns = result.metadata.columns ?? [];
  const rows = result.rows.map((cells) => Object.fromEntries(columns.map((c, i) => [c.name, decodeCell(c.type, cells[i] ?? null)])));
  return { body: frame.body, columns, rows };
}
