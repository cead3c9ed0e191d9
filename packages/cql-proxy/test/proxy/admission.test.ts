import { afterEach, describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { Admission, Ticket } from '../../src/proxy/admission.js';

/** Just what admission reads from a socket: its peer, whether it is destroyed, its 'close'. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  static #port = 40000;
  readonly remotePort = FakeSocket.#port++;
  constructor(readonly remoteAddress: string) {
    super();
  }
  destroy(): this {
    if (!this.destroyed) {
      this.destroyed = true;
      this.emit('close');
    }
    return this;
  }
}

const limits = { maxConnections: 10, maxHandshaking: 6, maxPerAddress: 5, maxHandshakingPerAddress: 3, handshakeTimeout: 60_000 };
const sockets: FakeSocket[] = [];
const open = (address: string) => {
  const socket = new FakeSocket(address);
  sockets.push(socket);
  return socket;
};
const admit = (admission: Admission, address: string) => admission.admit(open(address) as unknown as Socket);

afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
});

describe('admission', () => {
  it('bounds handshaking sockets per address, so one address cannot lock out another', () => {
    const admission = new Admission(limits);
    const slow = [1, 2, 3].map(() => admit(admission, '127.0.0.2'));
    expect(slow.every((t) => t instanceof Ticket)).toBe(true);
    expect(admit(admission, '127.0.0.2')).toMatch(/handshake from 127\.0\.0\.2 \(3\)/);
    expect(admit(admission, '127.0.0.1')).toBeInstanceOf(Ticket);
  });

  it('bounds open sockets per address, established ones included', () => {
    const admission = new Admission(limits);
    for (let i = 0; i < 5; i++) (admit(admission, '127.0.0.3') as Ticket).established();
    expect(admit(admission, '127.0.0.3')).toMatch(/from 127\.0\.0\.3 \(5\)/);
    expect(admit(admission, '127.0.0.4')).toBeInstanceOf(Ticket);
  });

  it('bounds handshaking sockets of all addresses below the connection limit', () => {
    const admission = new Admission(limits);
    for (const a of ['10.0.0.1', '10.0.0.1', '10.0.0.2', '10.0.0.2', '10.0.0.3', '10.0.0.3']) admit(admission, a);
    expect(admission.handshaking).toBe(6);
    expect(admit(admission, '10.0.0.4')).toMatch(/in their handshake \(6\)/);
  });

  it('holds a slot until the socket has closed, not until the connection gave up on it', () => {
    const admission = new Admission({ ...limits, maxConnections: 2 });
    const first = open('127.0.0.1');
    (admission.admit(first as unknown as Socket) as Ticket).established();
    (admit(admission, '127.0.0.5') as Ticket).established();
    expect(admission.open).toBe(2);
    expect(admit(admission, '127.0.0.6')).toBe('Too many client connections (2)');
    first.destroy();
    expect(admission.open).toBe(1);
    expect(admit(admission, '127.0.0.6')).toBeInstanceOf(Ticket);
  });

  it('destroys a socket whose handshake does not finish in time, and frees its slot', async () => {
    const admission = new Admission({ ...limits, handshakeTimeout: 20 });
    const silent = open('127.0.0.7');
    admission.admit(silent as unknown as Socket);
    const done = open('127.0.0.7');
    (admission.admit(done as unknown as Socket) as Ticket).established();
    await new Promise<void>((resolve) => silent.once('close', () => resolve()));
    expect(admission.handshakeTimeouts).toBe(1);
    expect(done.destroyed).toBe(false);
    expect(admission.open).toBe(1);
    expect(admission.handshaking).toBe(0);
  });

  it('finds the ticket of a wrapping (TLS) socket by its peer', () => {
    const admission = new Admission(limits);
    const raw = open('127.0.0.8');
    const ticket = admission.admit(raw as unknown as Socket);
    const wrapper = { remoteAddress: raw.remoteAddress, remotePort: raw.remotePort } as unknown as Socket;
    expect(admission.ticketOf(wrapper)).toBe(ticket);
  });

  it('lets refused sockets wait for their answer only up to the handshake limit', () => {
    const admission = new Admission({ ...limits, maxHandshaking: 2 });
    const refused = [open('1.1.1.1'), open('1.1.1.1'), open('1.1.1.1')];
    expect(refused.map((s) => admission.holdRefused(s as unknown as Socket))).toEqual([true, true, false]);
    refused[0]!.destroy();
    expect(admission.holdRefused(open('1.1.1.1') as unknown as Socket)).toBe(true);
  });
});
