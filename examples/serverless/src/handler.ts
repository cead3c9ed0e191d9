import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMuster, FencedResource, type Muster, type MusterConfig } from '@muster/core';

/** What the function is invoked with. */
export interface HandlerEvent {
  /** The service whose endpoints to list (default `orders`). */
  readonly service?: string;
  /** The lock guarding the critical section (default `nightly-report`). */
  readonly lock?: string;
}

export interface HandlerResult {
  readonly endpoints: readonly string[];
  /** The fencing token the critical section ran under. */
  readonly token: string;
  /** Invocations this instance has served, this one included. */
  readonly invocation: number;
  /** True for the invocation that created the Muster (a cold start). */
  readonly cold: boolean;
}

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The config: a YAML file named by MUSTER_CONFIG, else a built-in object on the adapter named by
 * MUSTER_ADAPTER (default `static`). Relative adapter paths resolve beside the YAML file, or beside
 * this module for the built-in config — that is how a bundle ships its adapter (see README).
 */
function config(): string | MusterConfig {
  if (process.env.MUSTER_CONFIG) return process.env.MUSTER_CONFIG;
  const adapter = process.env.MUSTER_ADAPTER ?? 'static';
  return {
    version: 1,
    discovery: {
      adapter,
      options: {
        service: 'orders',
        members: [
          { id: 'orders-0', address: '127.0.0.1', port: 8080 },
          { id: 'orders-1', address: '127.0.0.1', port: 8081 },
        ],
      },
    },
    lock: { adapter, options: { ttl: '3s' } },
  };
}

// Module scope lives as long as the function instance: warm invocations reuse the Muster. Nothing
// in it runs between invocations — list() leaves nothing behind and withLock releases its lease,
// which clears its renewal timer — so a frozen or idle instance costs nothing.
let instance: Promise<Muster> | undefined;
let invocations = 0;
// The resource the critical section protects; a real one keeps the highest token durably.
const report = new FencedResource<number>();

function muster(): { muster: Promise<Muster>; cold: boolean } {
  if (instance) return { muster: instance, cold: false };
  instance = createMuster(config(), { cwd: here });
  // A failed start must not poison the instance: the next invocation tries again.
  void instance.catch(() => {
    instance = undefined;
  });
  return { muster: instance, cold: true };
}

export async function handler(event: HandlerEvent = {}): Promise<HandlerResult> {
  const { muster: pending, cold } = muster();
  const m = await pending;
  const invocation = ++invocations;
  const endpoints = await m.discovery.list(event.service ?? 'orders');
  const token = await m.lock.withLock(
    event.lock ?? 'nightly-report',
    async (lease) => {
      report.write(lease.token, invocation);
      return lease.token;
    },
    { wait: 10_000 },
  );
  return { endpoints: endpoints.map((e) => e.id), token: token.toString(), invocation, cold };
}

/**
 * The shutdown path (a runtime's SIGTERM before it reclaims the instance, or a test): closes the
 * Muster so leases are released and connections closed; the next invocation starts cold.
 */
export async function close(): Promise<void> {
  const pending = instance;
  instance = undefined;
  if (pending) await (await pending.catch(() => undefined))?.close();
}
