import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import type { Server as HttpServer } from 'node:http';
import type { Logger } from 'pino';
import type { Muster } from '@muster/core';
import type { ProxyConfig } from '../config.js';
import { ProxyMetrics } from '../http/metrics.js';
import { proxyReadiness } from '../http/readiness.js';
import { createOperationsServer, type Readiness } from '../http/server.js';
import { encodeError } from '../protocol/error-message.js';
import { ErrorCode } from '../protocol/errors.js';
import { encodeFrameHeader, MAX_BODY_LENGTH, Opcode } from '../protocol/frame.js';
import type { Event } from '../protocol/event.js';
import { describeVersions } from '../protocol/version.js';
import { diffViews } from '../virtual/events.js';
import type { VirtualMember } from '../virtual/membership.js';
import type { VirtualView } from '../virtual/view.js';
import { BackendCluster } from './backend-cluster.js';
import type { BackendTls } from './backend-connection.js';
import { BackendPool } from './backend-pool.js';
import { Admission } from './admission.js';
import { BufferBudget } from './buffer-budget.js';
import { ClientConnection } from './client-connection.js';
import { frameCompression } from '../protocol/compression.js';
import type { ProxyContext, SystemTableIntercept } from './context.js';
import { drainClients, drainLinger } from './drain.js';
import { farewellEvents, leavingDataCenter } from './leaving.js';
import { MembershipService } from './membership-service.js';
import { DRAINING_MESSAGE } from './peer-probe.js';
import { peerProbeFor } from './peer-probe-setup.js';
import { PreparedCache } from './prepared-cache.js';
import { backendFootprint } from './backend-footprint.js';
import { createSystemTableIntercept } from './system-intercept.js';
import { ReplicaRouter } from '../routing/replica-router.js';
import type { NodeHealth } from './node-health.js';
import { adoptIntoSlabs, type SlabReads } from './slab-reads.js';

const startedAt = Date.now();

/**
 * The running proxy: a CQL listener whose clients see the proxy instances as the cluster, the
 * control connection to the real one, the membership service, and the operations HTTP port.
 */
export class CqlProxy {
  readonly config: ProxyConfig;
  readonly metrics = new ProxyMetrics(
    () => this.#clients,
    () => this.#backend.health.states(),
  );
  readonly #muster: Muster;
  readonly #log: Logger;
  readonly #backend: BackendCluster;
  readonly #pool: BackendPool;
  readonly #clients = new Set<ClientConnection>();
  readonly #prepared: PreparedCache;
  readonly #admission: Admission;
  #membership: MembershipService | undefined;
  #server: Server | undefined;
  #http: HttpServer | undefined;
  #draining = false;
  #nextClientId = 1;
  readonly #context: ProxyContext;
  readonly #intercept: SystemTableIntercept;
  /** Relative file names in the config (TLS material) resolve from here. */
  readonly #configDir: string;

  constructor(config: ProxyConfig, muster: Muster, log: Logger) {
    this.config = config;
    this.#configDir = muster.config.dir;
    this.#muster = muster;
    this.#log = log;
    this.#prepared = new PreparedCache(config.limits.preparedCacheSize);
    const connections = config.connections;
    this.#admission = new Admission({
      maxConnections: config.limits.maxClientConnections,
      maxHandshaking: connections.maxHandshaking,
      maxPerAddress: connections.maxPerAddress,
      maxHandshakingPerAddress: connections.maxHandshakingPerAddress,
      handshakeTimeout: connections.handshakeTimeout,
    });
    this.metrics.sockets = () => ({ open: this.#admission.open, handshaking: this.#admission.handshaking });
    const backendTls = this.#backendTls();
    this.#backend = new BackendCluster({
      contactPoints: config.backend.contactPoints.map(parseHostPort),
      ...(config.backend.localDataCenter ? { localDataCenter: config.backend.localDataCenter } : {}),
      ...(config.backend.username !== undefined ? { username: config.backend.username } : {}),
      ...(config.backend.password !== undefined ? { password: config.backend.password } : {}),
      connectTimeout: config.backend.connectTimeout,
      requestTimeout: config.backend.requestTimeout,
      probeInterval: config.backend.probeInterval,
      probeTimeout: config.backend.probeTimeout,
      ...(backendTls ? { tls: backendTls } : {}),
    });
    this.#backend.health.onChange(({ node, healthy, reason }) => {
      this.metrics.backendNodeTransitions.inc({ node, to: healthy ? 'healthy' : 'sick' });
      if (healthy) this.#log.info({ node }, 'backend node answers again; new client connections may use it');
      else this.#log.warn({ node, reason }, 'backend node is sick; closing the client connections on it and avoiding it');
    });
    this.#pool = new BackendPool(this.#backend, {
      connectTimeout: config.backend.connectTimeout,
      // maxFrameBytes bounds what clients send; answers (a large page) may be as big as the spec allows.
      maxBodyLength: MAX_BODY_LENGTH,
      heartbeatInterval: config.backend.heartbeatInterval,
      ...(backendTls ? { tls: backendTls } : {}),
      onCount: (node, delta) => this.metrics.backendConnections.inc({ node }, delta),
    });
    this.#intercept = createSystemTableIntercept({
      config,
      backend: () => this.#backend.view,
      view: () => this.#membership?.view,
      gossipGeneration: Math.floor(startedAt / 1000),
    });
    this.#context = {
      config,
      metrics: this.metrics,
      intercept: this.#intercept,
      prepared: this.#prepared,
      supportedOptions: () => {
        const view = this.#backend.view;
        const compression = ['lz4', 'snappy'].filter((name) => view.compression.includes(name));
        return new Map([
          ['CQL_VERSION', [view.cqlVersion]],
          ['COMPRESSION', compression],
          ['PROTOCOL_VERSIONS', describeVersions()],
        ]);
      },
      codec: (name) => (this.#backend.view.compression.includes(name) ? frameCompression(name) : undefined),
      connectBackend: (version, onClose) => this.#pool.connect(version, onClose),
      router: config.routing.replicas
        ? new ReplicaRouter(
            () => this.#backend.view.routing,
            (node) => this.#backend.health.isHealthy(node),
          )
        : undefined,
      connectNode: (node, version, onClose) => this.#pool.connectTo(node, version, onClose),
      draining: () => this.#draining,
      backendFootprint: () => backendFootprint(this.#backend.view),
      awaitSchemaAgreement: async (coordinator, body) => {
        const timeout = config.backend.schemaAgreementTimeout;
        if (timeout === 0) return;
        const agreed = await this.#backend.agreeOnSchema(coordinator, body, timeout);
        this.metrics.schemaAgreementWaits.inc({ outcome: agreed ? 'agreed' : 'timeout' });
        if (!agreed) this.#log.warn({ timeout }, 'the backend nodes did not agree on the schema in time; answering the DDL anyway');
      },
      eventsSince: (view) => {
        const current = this.#membership?.view;
        if (!view || !current || view === current) return [];
        return diffViews(view, current).map(({ type, change, address }) => ({ type, change, address }));
      },
      forget: (client) => {
        if (this.#clients.delete(client)) this.metrics.clientConnections.dec();
      },
      established: (client) => {
        this.#admission.ticketOf(client.socket)?.established();
        const idle = this.config.connections.idleTimeout;
        if (idle > 0) client.socket.setTimeout(idle, () => client.socket.destroy());
      },
      buffers: new BufferBudget(config.connections.maxBufferedBytes),
    };
  }

  /** Which backend nodes answer (what routing and new client connections avoid). */
  get backendHealth(): NodeHealth {
    return this.#backend.health;
  }

  get port(): number {
    return (this.#server?.address() as AddressInfo | null)?.port ?? this.config.listen.port;
  }

  get httpPort(): number {
    return (this.#http?.address() as AddressInfo | null)?.port ?? this.config.http.port;
  }

  async start(): Promise<void> {
    const view = await this.#backend.start();
    this.#log.info(
      { backend: view.nodes.map((n) => `${n.host}:${n.port}`), release: view.releaseVersion, dc: view.localDataCenter },
      'backend connected',
    );
    this.#backend.onSchemaChange((change) => {
      const event: Event = { type: 'SCHEMA_CHANGE', ...change };
      for (const client of this.#clients) client.pushEvent(event);
    });

    this.#server = this.#listener();
    await listen(this.#server, this.config.listen.port, this.config.listen.host, 'proxy.listen');
    this.#http = createOperationsServer({
      metrics: this.metrics,
      readiness: () => this.readiness(),
      topology: () => this.topology(),
    });
    await listen(this.#http, this.config.http.port, this.config.http.host, 'proxy.http');

    const discovery = this.#muster.discovery;
    const probing = peerProbeFor(this.config, this.#muster, this.#listenerTls());
    const heartbeat = this.#muster.has('heartbeat') ? this.#muster.heartbeat : undefined;
    this.#membership = new MembershipService({
      config: this.config,
      discovery,
      heartbeat,
      self: () => {
        const dc = this.#draining
          ? leavingDataCenter(this.config.dataCenter ?? this.#backend.view.localDataCenter)
          : this.config.dataCenter;
        return {
          id: this.config.instanceId,
          ...(this.config.advertise ? { address: this.config.advertise.address } : {}),
          nativePort: this.config.advertise?.port ?? this.port,
          ready: !this.#draining,
          ...(dc ? { dc } : {}),
          rack: this.config.rack,
        };
      },
      dataCenters: () => this.#backend.view.dataCenters,
      membership: {
        clusterName: this.config.clusterName ?? this.#backend.view.clusterName,
        defaultDc: this.config.dataCenter ?? this.#backend.view.localDataCenter,
        defaultRack: this.config.rack,
        tokens: { mode: this.config.tokens.mode, perMember: this.config.tokens.perInstance },
        requireHeartbeat: heartbeat !== undefined && !probing.heartbeatsProcessLocal,
      },
      ...(probing.probe ? { probe: probing.probe } : {}),
      listingIsMembership: this.#muster.adapters.discovery === 'static',
      payload: () => ({
        address: this.config.advertise?.address ?? this.config.listen.host,
        port: this.config.advertise?.port ?? this.port,
        releaseVersion: this.#backend.view.releaseVersion,
        connections: this.#clients.size,
        startedAt,
        draining: this.#draining,
      }),
      onChange: (view, events) => this.#membershipChanged(view, events),
      onError: (error) => {
        this.metrics.discoveryErrors.inc();
        this.#log.warn({ err: error }, 'membership source failed; keeping the last known members');
      },
    });
    await discovery.register({
      service: this.config.service,
      id: this.config.instanceId,
      address: this.config.advertise?.address ?? this.config.listen.host,
      port: this.config.advertise?.port ?? this.port,
    });
    await this.#membership.start();
    if (probing.warning && (this.#membership.view?.members.length ?? 0) > 1)
      this.#log.warn({ heartbeat: 'process-local' }, probing.warning);
    this.#log.info({ listen: `${this.config.listen.host}:${this.port}`, http: this.httpPort }, 'proxy ready');
  }

  /** Plain TCP, or TLS when `proxy.tls` is set (then only TLS is accepted). */
  #listener(): Server {
    const tls = this.config.tls;
    if (!tls) {
      return createServer((accepted) => {
        // Client sockets read into slabs like backend ones (slab-reads.ts): no stream pass per read.
        const adopted = adoptIntoSlabs(accepted);
        const socket = adopted?.socket ?? accepted;
        if (this.#admit(socket, true, adopted?.reads)) this.#accept(socket, adopted?.reads);
      });
    }
    const read = (file: string, what: string) => this.#readFile(file, `proxy.tls.${what}`);
    const server = createTlsServer(
      {
        cert: read(tls.certFile, 'certFile'),
        key: read(tls.keyFile, 'keyFile'),
        ...(tls.caFile ? { ca: read(tls.caFile, 'caFile') } : {}),
        requestCert: tls.requireClientCert,
        rejectUnauthorized: tls.requireClientCert,
        handshakeTimeout: this.config.connections.tlsHandshakeTimeout,
      },
      (socket) => this.#accept(socket),
    );
    // The TCP socket is admitted before its handshake, so handshakes count against the limits; a
    // refused one is dropped at once (there is no TLS session yet to carry a CQL error).
    server.prependListener('connection', (socket: Socket) => {
      if (!this.#admit(socket, false)) socket.destroy();
    });
    // A client that fails the handshake is counted and dropped; it never reaches the CQL layer.
    // Node leaves the socket open to this listener, a handshake timeout included (it only reports it).
    server.on('tlsClientError', (_error, socket) => {
      this.metrics.errors.inc({ kind: 'tls_handshake' });
      socket.destroy();
    });
    return server;
  }

  /** The probe speaks TLS to peers when this listener does, presenting this instance's certificate. */
  #listenerTls(): { cert: Buffer; key: Buffer } | undefined {
    const tls = this.config.tls;
    if (!tls) return undefined;
    return { cert: this.#readFile(tls.certFile, 'proxy.tls.certFile'), key: this.#readFile(tls.keyFile, 'proxy.tls.keyFile') };
  }

  /** TLS material is read once, at construction: a missing file fails the start, naming the setting. */
  #readFile(file: string, setting: string): Buffer {
    try {
      return readFileSync(resolve(this.#configDir, file));
    } catch (error) {
      throw new Error(`${setting}: cannot read ${file}: ${(error as Error).message}`, { cause: error });
    }
  }

  #backendTls(): BackendTls | undefined {
    const tls = this.config.backend.tls;
    if (!tls) return undefined;
    if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
      throw new Error('proxy.backend.tls: certFile and keyFile go together (a client certificate needs its key)');
    }
    const read = (file: string | undefined, what: string) =>
      file === undefined ? {} : { [what]: this.#readFile(file, `proxy.backend.tls.${what}File`) };
    return {
      ...read(tls.caFile, 'ca'),
      ...read(tls.certFile, 'cert'),
      ...read(tls.keyFile, 'key'),
      ...(tls.serverName ? { serverName: tls.serverName } : {}),
      verifyHostname: tls.verifyHostname,
    };
  }

  /** Gives `socket` a slot, or refuses it (with a CQL error the driver can read when `answer`). */
  #admit(socket: Socket, answer = true, reads?: SlabReads): boolean {
    const admitted = this.#draining
      ? DRAINING_MESSAGE // peers' probes read it: this instance is draining, not dead
      : this.#membership?.selfListed === false
        ? `This proxy (${this.config.instanceId}) is not in the members list of ${this.config.service}; use another host`
        : this.#admission.admit(socket);
    if (typeof admitted !== 'string') return true;
    this.metrics.errors.inc({ kind: 'connection_refused' });
    if (answer && this.#admission.holdRefused(socket)) refuse(socket, admitted, this.config.connections.closeGrace, reads);
    else socket.destroy();
    return false;
  }

  #accept(socket: Socket, reads?: SlabReads): void {
    const client = new ClientConnection(this.#nextClientId++, socket, this.#context, reads);
    this.#clients.add(client);
    this.metrics.clientConnections.inc();
  }

  #membershipChanged(view: VirtualView, events: readonly Event[]): void {
    const members = view.members;
    this.metrics.membershipChanges.inc();
    this.metrics.membershipSize.set({ state: 'up' }, members.filter((m) => m.up).length);
    this.metrics.membershipSize.set({ state: 'down' }, members.filter((m) => !m.up).length);
    if (events.length > 0) this.#log.info({ members: members.map((m) => `${m.id}${m.up ? '' : ' (down)'}`) }, 'membership changed');
    // The tables already answer from `view` (the tracker published it before calling us): events go out after.
    for (const event of events) {
      for (const client of this.#clients) client.pushEvent(event);
    }
  }

  readiness(): Readiness {
    return proxyReadiness({
      controlNode: this.#backend.controlNode,
      nodes: this.#backend.health.states(),
      registered: this.#membership?.view !== undefined,
      listed: this.#membership?.selfListed !== false,
      draining: this.#draining,
    });
  }

  topology() {
    const members: readonly VirtualMember[] = this.#membership?.view?.members ?? [];
    return {
      instanceId: this.config.instanceId,
      tokenMode: this.config.tokens.mode,
      members: members.map((m) => ({
        id: m.id,
        address: m.address,
        port: m.nativePort,
        dc: m.dc,
        rack: m.rack,
        up: m.up,
        ready: m.ready,
        alive: m.alive,
        hostId: m.hostId,
        tokens: m.tokens,
        self: m.self,
      })),
      backend: this.#backend.connected ? this.#backend.view.nodes : [],
    };
  }

  /**
   * Graceful shutdown (drain.ts): show self draining first — readiness 503, the heartbeat says so,
   * a probe is told so — so peers announce DOWN and then remove this instance; serve while drivers
   * move away; half-close each remaining connection after its last answer; then close everything.
   */
  async stop(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    this.#membership?.selfChanged();
    await this.#membership
      ?.announceDraining()
      .catch((error: unknown) => this.#log.warn({ err: error }, 'could not mark the heartbeat draining; peers will notice at the end'));
    // Drivers can only move to a peer that is up; alone, there is nothing to wait for.
    const peerUp = this.#membership?.view?.members.some((m) => !m.self && m.up) ?? false;
    const report = await drainClients(this.#clients, {
      grace: peerUp ? this.config.shutdown.grace : 0,
      linger: peerUp ? drainLinger(this.config) : 0,
      timeout: this.config.shutdown.drainTimeout,
      farewell: farewellEvents(this.#membership?.view),
    });
    this.#log.info(report, 'drained');
    await this.#membership
      ?.leave()
      .catch((error: unknown) => this.#log.warn({ err: error }, 'could not remove the heartbeat; peers will notice through its ttl'));
    await this.#muster.discovery.deregister().catch(() => undefined);
    this.#server?.close();
    await this.#membership?.close();
    this.#backend.close();
    await new Promise<void>((resolve) => (this.#http ? this.#http.close(() => resolve()) : resolve()));
    this.#http?.closeAllConnections();
  }
}

function refuse(socket: Socket, message: string, grace: number, reads: SlabReads | undefined): void {
  const answer = (chunk: Buffer) => {
    if (reads) reads.receive = () => undefined;
    const version = Math.min(Math.max((chunk[0] ?? 4) & 0x7f, 3), 4);
    const stream = chunk.length >= 4 ? chunk.readInt16BE(2) : 0;
    const body = encodeError({ code: ErrorCode.OVERLOADED, message });
    socket.end(Buffer.concat([encodeFrameHeader({ version, response: true, flags: 0, stream, opcode: Opcode.ERROR }, body.length), body]));
  };
  if (reads) reads.receive = answer;
  else socket.once('data', answer);
  socket.on('error', () => socket.destroy());
  // The answer goes out on the client's first bytes; a client that sends nothing, or keeps its
  // end open, is destroyed after the grace period.
  setTimeout(() => socket.destroy(), grace).unref();
}

/** Listens; a failure names the setting (`proxy.listen`, `proxy.http`) and the address it asked for. */
function listen(server: Server | HttpServer, port: number, host: string, setting: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (error: NodeJS.ErrnoException) => {
      const why =
        error.code === 'EADDRINUSE' ? 'is already in use' : error.code === 'EACCES' ? 'may not be bound by this user' : error.message;
      reject(new Error(`${setting}: ${host.includes(':') ? `[${host}]` : host}:${port} ${why}`, { cause: error }));
    };
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      resolve();
    });
  });
}

/** A contact point as the config schema admits it: host, host:port, [IPv6]:port, or a bare IPv6 address. */
export function parseHostPort(value: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(value);
  // Anything else (two colons or more, no brackets) is a bare IPv6 address on the default port.
  if (!match) return { host: value, port: 9042 };
  return { host: match[1] ?? match[2]!, port: match[3] ? Number(match[3]) : 9042 };
}
