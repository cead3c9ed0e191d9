/**
 * The native protocol, v3–v5, as pure code: no sockets, no timers. Bytes in, typed messages out,
 * and back. Everything a proxy does not need to understand stays bytes (frame bodies, cells).
 * Every decoder throws ProtocolError (with the CQL error code to answer) on bad input, never
 * reads past its input, and never allocates from an unchecked length.
 *
 *   frame.ts        frame header, opcodes, flags, the incremental FrameDecoder
 *   segment.ts      v5 segments (CRC24/CRC32, lz4), SegmentedFrameDecoder, encodeSegments
 *   compression.ts  v3/v4 frame-body lz4 and snappy, over our own bounded lz4.ts and snappy.ts
 *   envelope.ts     tracing id / warnings / custom payload; openFrame / sealFrame
 *   reader/writer   the notation types of spec §3
 *   messages.ts     decodeMessage / encodeMessage over the per-message codecs
 *   types/cells     data type options and cell values; rows.ts builds RESULT Rows for virtual tables
 *   version.ts      supported versions and the "unsupported version" reply
 */
export { ErrorCode, FrameTooLargeError, ProtocolError, UnsupportedVersionError, encodingError } from './errors.js';
export { Consistency, consistencyName } from './consistency.js';
export { addressToBytes, bytesToAddress } from './inet.js';
export { Reader, UNSET, type InetAddress, type Unset } from './reader.js';
export { Writer } from './writer.js';
export {
  decodeFrameHeader,
  encodeFrame,
  encodeFrameHeader,
  FrameDecoder,
  FrameFlag,
  HEADER_LENGTH,
  isOpcode,
  MAX_BODY_LENGTH,
  Opcode,
  RESPONSE_BIT,
  type Frame,
  type FrameDecoderOptions,
  type FrameHeader,
} from './frame.js';
export {
  encodeSegment,
  encodeSegmentHeader,
  encodeSegments,
  MAX_SEGMENT_PAYLOAD,
  SegmentDecoder,
  SegmentedFrameDecoder,
  type Segment,
  type SegmentOptions,
} from './segment.js';
export { crc24, crc32 } from './crc.js';
export { frameCompression, lz4, snappy, type FrameCompression } from './compression.js';
export { lz4CompressBlock, lz4DecompressBlock } from './lz4.js';
export { snappyCompress, snappyDecompress } from './snappy.js';
export { joinBody, openFrame, sealFrame, splitBody, type BodyExtras } from './envelope.js';
export { QueryFlag, type BoundValue, type QueryParameters } from './query-parameters.js';
export {
  BatchType,
  StartupOption,
  decodeAuthToken,
  decodeBatch,
  decodeExecute,
  decodePrepare,
  decodeQuery,
  decodeRegister,
  decodeStartup,
  encodeAuthToken,
  encodeBatch,
  encodeExecute,
  encodePrepare,
  encodeQuery,
  encodeRegister,
  encodeStartup,
  type AuthToken,
  type Batch,
  type BatchStatement,
  type Execute,
  type Prepare,
  type Query,
  type Register,
  type Startup,
} from './requests.js';
export {
  decodeAuthenticate,
  decodeSupported,
  encodeAuthenticate,
  encodeSupported,
  type Authenticate,
  type Supported,
} from './responses.js';
export { decodeError, encodeError, type ErrorDetails, type ErrorMessage } from './error-message.js';
export { decodeEvent, encodeEvent, EventType, type Event, type SchemaChange } from './event.js';
export {
  decodeResult,
  encodeResult,
  ResultKind,
  RowsFlag,
  type ColumnSpec,
  type PreparedMetadata,
  type Result,
  type RowsMetadata,
} from './result.js';
export { decodeMessage, encodeMessage, type Message } from './messages.js';
export { cqlTypeName, DataTypeId, readDataType, types, writeDataType, type DataType, type NativeTypeId } from './types.js';
export { decodeCell, encodeCell, type CellValue } from './cells.js';
export { rowsResult, type RowsOptions } from './rows.js';
export {
  describeVersions,
  isSupportedVersion,
  nextVersionDown,
  refusesVersion,
  replyVersion,
  SUPPORTED_VERSIONS,
  UNSUPPORTED_VERSION_MESSAGE,
  unsupportedVersionReply,
} from './version.js';
