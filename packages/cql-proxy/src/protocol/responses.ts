import { Reader } from './reader.js';
import { Writer } from './writer.js';

/** The small responses (spec §4.2.2–4.2.4). READY's body is empty. AUTH_* tokens: see `requests.ts`. */

/** AUTHENTICATE: the authenticator's class name. */
export interface Authenticate {
  readonly authenticator: string;
}

export const decodeAuthenticate = (body: Buffer): Authenticate => ({ authenticator: new Reader(body).readString() });
export const encodeAuthenticate = (m: Authenticate): Buffer => new Writer().writeString(m.authenticator).finish();

/** SUPPORTED: each STARTUP option with its accepted values, plus PROTOCOL_VERSIONS (v5). */
export interface Supported {
  readonly options: ReadonlyMap<string, readonly string[]>;
}

export const decodeSupported = (body: Buffer): Supported => ({ options: new Reader(body).readStringMultimap() });
export const encodeSupported = (m: Supported): Buffer => new Writer().writeStringMultimap(m.options).finish();
