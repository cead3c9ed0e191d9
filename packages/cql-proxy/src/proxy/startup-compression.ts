import type { FrameCompression } from '../protocol/compression.js';

/** What a STARTUP's COMPRESSION option settles: no compression, one the proxy speaks, or a refusal. */
export type StartupCompression =
  | { readonly name?: undefined; readonly codec?: undefined }
  | { readonly name: 'lz4' | 'snappy'; readonly codec: FrameCompression }
  | { readonly refusal: string };

/**
 * Settles the COMPRESSION a client's STARTUP asks for as Cassandra does (`StartupMessage.execute`):
 * the name in any case ("LZ4" is lz4), snappy refused in v5 (whose segments are LZ4 or nothing), and
 * a refusal in Cassandra's own words, which drivers show their users. `codec` gives the compression
 * the backend nodes speak too, by its lower-case name.
 */
export function startupCompression(
  requested: string | undefined,
  version: number,
  codec: (name: 'lz4' | 'snappy') => FrameCompression | undefined,
): StartupCompression {
  if (requested === undefined) return {};
  const name = requested.toLowerCase();
  if (name !== 'lz4' && name !== 'snappy') return { refusal: `Unknown compression algorithm: ${name}` };
  const found = codec(name);
  if (!found) return { refusal: `This instance does not support ${name === 'lz4' ? 'LZ4' : 'Snappy'} compression` };
  if (name === 'snappy' && version >= 5) return { refusal: 'Snappy compression is not supported in protocol V5' };
  return { name, codec: found };
}
