import type { Socket } from 'node:net';

export interface AdmissionLimits {
  /** Open client sockets of every kind (handshaking, established, closing). */
  readonly maxConnections: number;
  /** Sockets that have not finished their handshake, all addresses together. */
  readonly maxHandshaking: number;
  /** Open sockets from one address. */
  readonly maxPerAddress: number;
  /** Handshaking sockets from one address. */
  readonly maxHandshakingPerAddress: number;
  /** A socket still handshaking this long (ms) after it was accepted is destroyed. */
  readonly handshakeTimeout: number;
}

/** What one client address holds. */
interface AddressLoad {
  open: number;
  handshaking: number;
}

/** One admitted socket's slot: held from accept until the socket has really closed. */
export class Ticket {
  readonly address: string;
  #handshaking = true;
  #deadline: NodeJS.Timeout | undefined;
  readonly #admission: Admission;

  constructor(admission: Admission, address: string, socket: Socket, timeout: number) {
    this.#admission = admission;
    this.address = address;
    this.#deadline = setTimeout(() => {
      // Silent or slow: half a header, a stalled TLS handshake, STARTUP never sent or never finished.
      admission.onHandshakeTimeout();
      socket.destroy();
    }, timeout);
    this.#deadline.unref();
  }

  get handshaking(): boolean {
    return this.#handshaking;
  }

  /** The handshake finished (READY or AUTH_SUCCESS): the socket moves to the established count. */
  established(): void {
    if (!this.#handshaking) return;
    this.#handshaking = false;
    clearTimeout(this.#deadline);
    this.#admission.leaveHandshake(this.address);
  }

  /** Called once, from the socket's 'close'. */
  release(): void {
    clearTimeout(this.#deadline);
    this.#admission.release(this);
  }
}

/**
 * Decides whether an accepted socket gets a slot, and counts every admitted socket until its
 * 'close' event: a slot is never freed while its file descriptor is still open. Handshaking
 * sockets are bounded on their own, below the connection limit, and per address, so sockets that
 * never finish STARTUP cannot take the slots of established clients, and one address cannot take
 * every slot.
 */
export class Admission {
  readonly #limits: AdmissionLimits;
  readonly #byPeer = new Map<string, Ticket>();
  readonly #byAddress = new Map<string, AddressLoad>();
  #handshaking = 0;
  #timedOut = 0;
  #refused = 0;

  constructor(limits: AdmissionLimits) {
    this.#limits = limits;
  }

  /** Open admitted sockets. */
  get open(): number {
    return this.#byPeer.size;
  }

  get handshaking(): number {
    return this.#handshaking;
  }

  /** Sockets destroyed because their handshake did not finish in time, since start. */
  get handshakeTimeouts(): number {
    return this.#timedOut;
  }

  /** A ticket for `socket`, or the reason it is refused (for the client's error message). */
  admit(socket: Socket): Ticket | string {
    const address = socket.remoteAddress;
    if (address === undefined || socket.destroyed) return 'The connection closed while it was accepted';
    const limits = this.#limits;
    const load = this.#byAddress.get(address) ?? { open: 0, handshaking: 0 };
    if (this.#byPeer.size >= limits.maxConnections) return `Too many client connections (${limits.maxConnections})`;
    if (this.#handshaking >= limits.maxHandshaking) {
      return `Too many connections in their handshake (${limits.maxHandshaking}); retry shortly`;
    }
    if (load.open >= limits.maxPerAddress) return `Too many connections from ${address} (${limits.maxPerAddress})`;
    if (load.handshaking >= limits.maxHandshakingPerAddress) {
      return `Too many connections in their handshake from ${address} (${limits.maxHandshakingPerAddress}); retry shortly`;
    }
    load.open++;
    load.handshaking++;
    this.#byAddress.set(address, load);
    this.#handshaking++;
    const ticket = new Ticket(this, address, socket, limits.handshakeTimeout);
    const peer = peerOf(socket);
    this.#byPeer.set(peer, ticket);
    socket.once('close', () => {
      if (this.#byPeer.get(peer) === ticket) this.#byPeer.delete(peer);
      ticket.release();
    });
    return ticket;
  }

  /**
   * Whether a refused socket may wait (up to the close grace) to be told why. Refused sockets
   * hold descriptors too: beyond the handshake limit they are destroyed without an answer.
   */
  holdRefused(socket: Socket): boolean {
    if (this.#refused >= this.#limits.maxHandshaking) return false;
    this.#refused++;
    socket.once('close', () => this.#refused--);
    return true;
  }

  /** The ticket of an admitted socket, found by its peer address (a TLS socket wraps the admitted one). */
  ticketOf(socket: Socket): Ticket | undefined {
    return this.#byPeer.get(peerOf(socket));
  }

  /** @internal for {@link Ticket} */
  leaveHandshake(address: string): void {
    this.#handshaking--;
    const load = this.#byAddress.get(address);
    if (load) load.handshaking--;
  }

  /** @internal for {@link Ticket} */
  onHandshakeTimeout(): void {
    this.#timedOut++;
  }

  /** @internal for {@link Ticket} */
  release(ticket: Ticket): void {
    if (ticket.handshaking) ticket.established(); // leaves the handshake count
    const load = this.#byAddress.get(ticket.address);
    if (!load) return;
    load.open--;
    if (load.open <= 0) this.#byAddress.delete(ticket.address);
  }
}

const peerOf = (socket: Socket) => `${socket.remoteAddress}|${socket.remotePort}`;
