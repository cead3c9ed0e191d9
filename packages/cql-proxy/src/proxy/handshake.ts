import { ErrorCode } from '../protocol/errors.js';
import { Opcode } from '../protocol/frame.js';
import type { ErrorMessage } from '../protocol/error-message.js';

/**
 * Where a client connection is in its handshake (spec §4.1.1–4.1.2), and what it may be served
 * there. The proxy answers system tables, REGISTER and events itself, so it must gate them the way
 * Cassandra gates its own requests: a client the backend asked to authenticate reads nothing (no
 * cluster name, no host ids, no member addresses, no events) and sends nothing on to the backend but
 * its AUTH_RESPONSEs until the backend has answered AUTH_SUCCESS.
 *
 *   new ──STARTUP──▶ starting ──READY──────────────────────────────▶ ready
 *                       │ └────AUTHENTICATE──▶ authenticating ──AUTH_SUCCESS──┘
 *                       └──ERROR──▶ new
 */
export type HandshakePhase = 'new' | 'starting' | 'authenticating' | 'ready';

const names: Record<number, string> = Object.fromEntries(Object.entries(Opcode).map(([name, code]) => [code, name]));
const opcodeName = (opcode: number) => names[opcode] ?? `0x${opcode.toString(16)}`;
/** Module level: refusal() runs for every request, and a closure there is an allocation per call. */
const protocolError = (message: string): ErrorMessage => ({ code: ErrorCode.PROTOCOL_ERROR, message });

export class Handshake {
  #phase: HandshakePhase = 'new';

  get phase(): HandshakePhase {
    return this.#phase;
  }

  get ready(): boolean {
    return this.#phase === 'ready';
  }

  /**
   * The error a request with `opcode` is refused with in this phase, or undefined if it may go on.
   * The wording is Cassandra 5.0's own (its ServerConnection), so clients see the server's answer.
   */
  refusal(opcode: number): ErrorMessage | undefined {
    switch (this.#phase) {
      case 'new':
        return opcode === Opcode.OPTIONS || opcode === Opcode.STARTUP
          ? undefined
          : protocolError(`Unexpected message ${opcodeName(opcode)}, expecting STARTUP or OPTIONS`);
      case 'starting':
        // The backend has not answered STARTUP yet: until it says whether it wants credentials,
        // nothing may be answered or sent on.
        return opcode === Opcode.OPTIONS
          ? undefined
          : protocolError(`Unexpected message ${opcodeName(opcode)} before STARTUP was answered`);
      case 'authenticating':
        return opcode === Opcode.OPTIONS || opcode === Opcode.AUTH_RESPONSE
          ? undefined
          : protocolError(`Unexpected message ${opcodeName(opcode)}, expecting SASL_RESPONSE`);
      case 'ready':
        return opcode === Opcode.STARTUP ? protocolError('Unexpected message STARTUP, the connection is already initialized') : undefined;
    }
  }

  /** STARTUP was sent on to the backend. */
  startupSent(): void {
    this.#phase = 'starting';
  }

  /** The backend answered STARTUP (`opcode`: READY, AUTHENTICATE or ERROR). */
  startupAnswered(opcode: number): void {
    if (this.#phase !== 'starting') return;
    this.#phase = opcode === Opcode.READY ? 'ready' : opcode === Opcode.AUTHENTICATE ? 'authenticating' : 'new';
  }

  /** The backend answered an AUTH_RESPONSE: only AUTH_SUCCESS ends the exchange. */
  authAnswered(opcode: number): void {
    if (this.#phase === 'authenticating' && opcode === Opcode.AUTH_SUCCESS) this.#phase = 'ready';
  }
}
