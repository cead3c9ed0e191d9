import { decodeError, encodeError, type ErrorMessage } from './error-message.js';
import { ProtocolError } from './errors.js';
import { decodeEvent, encodeEvent, type Event } from './event.js';
import { Opcode } from './frame.js';
import {
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
  type Execute,
  type Prepare,
  type Query,
  type Register,
  type Startup,
} from './requests.js';
import {
  decodeAuthenticate,
  decodeSupported,
  encodeAuthenticate,
  encodeSupported,
  type Authenticate,
  type Supported,
} from './responses.js';
import { decodeResult, encodeResult, type Result } from './result.js';

/**
 * Every message by opcode, for code that wants one switch. A proxy mostly needs only a few of them
 * decoded and passes the rest through as bytes; the per-message codecs are exported for that.
 */
export type Message =
  | ({ readonly opcode: typeof Opcode.ERROR } & ErrorMessage)
  | ({ readonly opcode: typeof Opcode.STARTUP } & Startup)
  | { readonly opcode: typeof Opcode.READY }
  | ({ readonly opcode: typeof Opcode.AUTHENTICATE } & Authenticate)
  | { readonly opcode: typeof Opcode.OPTIONS }
  | ({ readonly opcode: typeof Opcode.SUPPORTED } & Supported)
  | ({ readonly opcode: typeof Opcode.QUERY } & Query)
  | { readonly opcode: typeof Opcode.RESULT; readonly result: Result }
  | ({ readonly opcode: typeof Opcode.PREPARE } & Prepare)
  | ({ readonly opcode: typeof Opcode.EXECUTE } & Execute)
  | ({ readonly opcode: typeof Opcode.REGISTER } & Register)
  | { readonly opcode: typeof Opcode.EVENT; readonly event: Event }
  | ({ readonly opcode: typeof Opcode.BATCH } & Batch)
  | ({ readonly opcode: typeof Opcode.AUTH_CHALLENGE } & AuthToken)
  | ({ readonly opcode: typeof Opcode.AUTH_RESPONSE } & AuthToken)
  | ({ readonly opcode: typeof Opcode.AUTH_SUCCESS } & AuthToken);

/** Decodes a message body (extras already split off, decompressed) of `opcode` in `version`. */
export function decodeMessage(opcode: number, body: Buffer, version: number): Message {
  switch (opcode) {
    case Opcode.ERROR:
      return { opcode, ...decodeError(body) };
    case Opcode.STARTUP:
      return { opcode, ...decodeStartup(body) };
    case Opcode.READY:
    case Opcode.OPTIONS:
      return { opcode };
    case Opcode.AUTHENTICATE:
      return { opcode, ...decodeAuthenticate(body) };
    case Opcode.SUPPORTED:
      return { opcode, ...decodeSupported(body) };
    case Opcode.QUERY:
      return { opcode, ...decodeQuery(body, version) };
    case Opcode.RESULT:
      return { opcode, result: decodeResult(body, version) };
    case Opcode.PREPARE:
      return { opcode, ...decodePrepare(body, version) };
    case Opcode.EXECUTE:
      return { opcode, ...decodeExecute(body, version) };
    case Opcode.REGISTER:
      return { opcode, ...decodeRegister(body) };
    case Opcode.EVENT:
      return { opcode, event: decodeEvent(body) };
    case Opcode.BATCH:
      return { opcode, ...decodeBatch(body, version) };
    case Opcode.AUTH_CHALLENGE:
    case Opcode.AUTH_RESPONSE:
    case Opcode.AUTH_SUCCESS:
      return { opcode, ...decodeAuthToken(body) };
    default:
      throw new ProtocolError(`Unknown opcode 0x${opcode.toString(16).padStart(2, '0')}`);
  }
}

export function encodeMessage(m: Message, version: number): Buffer {
  switch (m.opcode) {
    case Opcode.ERROR:
      return encodeError(m);
    case Opcode.STARTUP:
      return encodeStartup(m);
    case Opcode.READY:
    case Opcode.OPTIONS:
      return Buffer.alloc(0);
    case Opcode.AUTHENTICATE:
      return encodeAuthenticate(m);
    case Opcode.SUPPORTED:
      return encodeSupported(m);
    case Opcode.QUERY:
      return encodeQuery(m, version);
    case Opcode.RESULT:
      return encodeResult(m.result, version);
    case Opcode.PREPARE:
      return encodePrepare(m, version);
    case Opcode.EXECUTE:
      return encodeExecute(m, version);
    case Opcode.REGISTER:
      return encodeRegister(m);
    case Opcode.EVENT:
      return encodeEvent(m.event, version);
    case Opcode.BATCH:
      return encodeBatch(m, version);
    case Opcode.AUTH_CHALLENGE:
    case Opcode.AUTH_RESPONSE:
    case Opcode.AUTH_SUCCESS:
      return encodeAuthToken(m);
  }
}
