import { encodeCell, type CellValue } from './cells.js';
import { encodingError } from './errors.js';
import type { ColumnSpec, Result } from './result.js';

export interface RowsOptions {
  /** The client set Skip_metadata (QUERY/EXECUTE flag 0x02): send No_metadata. */
  readonly skipMetadata?: boolean;
  /** More pages follow: the state the client sends back to get the next one. */
  readonly pagingState?: Buffer | null;
  /** v5: the result metadata changed since PREPARE; the client must switch to this id. */
  readonly newMetadataId?: Buffer;
}

/**
 * A RESULT Rows answer built from JS values, as the virtual system tables produce them: each row
 * holds one value per column, in column order, encoded with the column's type.
 */
export function rowsResult(columns: readonly ColumnSpec[], rows: readonly (readonly CellValue[])[], options: RowsOptions = {}): Result {
  const encoded = rows.map((row, i) => {
    if (row.length !== columns.length) throw encodingError(`Row ${i} has ${row.length} values for ${columns.length} columns`);
    return row.map((value, j) => encodeCell((columns[j] as ColumnSpec).type, value));
  });
  const metadata = {
    columnCount: columns.length,
    ...(options.skipMetadata && options.newMetadataId === undefined ? {} : { columns }),
    ...(options.pagingState !== undefined ? { pagingState: options.pagingState } : {}),
    ...(options.newMetadataId !== undefined ? { newMetadataId: options.newMetadataId } : {}),
  };
  return { kind: 'Rows', metadata, rows: encoded };
}
