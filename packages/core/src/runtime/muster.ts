import type { Clock } from '../clock.js';
import { AdapterStartError, MusterError, PortNotConfiguredError } from '../errors.js';
import type { Discovery } from '../ports/discovery.js';
import type { HeartbeatStore } from '../ports/heartbeat.js';
import type { Lock } from '../ports/lock.js';
import type { AdapterContext, DefinedAdapter } from './adapter.js';
import { recordContributions, type AdapterContribution } from './contributions.js';
import { checkConfig } from './check.js';
import type { ConfigSource, LoadOptions, MusterConfig, PortName } from './config.js';

export interface CreateOptions extends LoadOptions {
  readonly clock?: Clock;
  /**
   * Adapters already imported, by the name a config uses for them. They win over resolution by
   * name, so a bundler sees a static import and a single-file bundle needs no adapter on disk.
   */
  readonly adapters?: Readonly<Record<string, DefinedAdapter>>;
}

type PortTypes = { discovery: Discovery; lock: Lock; heartbeat: HeartbeatStore };

/**
 * A running Muster: the ports the config selected. Close it (or `await using`) to release leases,
 * end watches and clear timers, in reverse order of creation. An application with its own
 * inversify container loads it there with `musterModule` from `@muster/core/inversify`.
 */
export class Muster implements AsyncDisposable {
  readonly config: ConfigSource;
  /** Which adapter serves each configured port. */
  readonly adapters: Readonly<Partial<Record<PortName, string>>>;
  readonly #ports: Partial<PortTypes>;
  readonly #order: PortName[];
  #closed: Promise<void> | undefined;

  constructor(config: ConfigSource, ports: Partial<PortTypes>, order: PortName[], adapters: Partial<Record<PortName, string>>) {
    this.config = config;
    this.#ports = ports;
    this.#order = order;
    this.adapters = adapters;
  }

  #port<P extends PortName>(name: P): PortTypes[P] {
    const port = this.#ports[name];
    if (!port) throw new PortNotConfiguredError(name);
    return port;
  }

  get discovery(): Discovery {
    return this.#port('discovery');
  }

  get lock(): Lock {
    return this.#port('lock');
  }

  get heartbeat(): HeartbeatStore {
    return this.#port('heartbeat');
  }

  has(port: PortName): boolean {
    return this.#ports[port] !== undefined;
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      const errors: unknown[] = [];
      // Newest first: a port created later may use an earlier one.
      for (const name of [...this.#order].reverse()) {
        await this.#ports[name]!.close().catch((e: unknown) => errors.push(e));
      }
      if (errors.length === 1) throw errors[0];
      if (errors.length > 1) throw new AggregateError(errors, 'several adapters failed to close');
    })();
    return this.#closed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Reads the config (a YAML path, a file: URL, an object, or a source an application loaded to read
 * its own section too), imports only the adapters it selects,
 * creates their ports and binds them. Every problem is a positioned ConfigError or an adapter error
 * that names the package.
 */
export async function createMuster(input: string | URL | MusterConfig | ConfigSource, options: CreateOptions = {}): Promise<Muster> {
  // The same validation --check runs (checkConfig), then the factories.
  const { source: config, ports: checked } = await checkConfig(input, options);
  const ports: Partial<PortTypes> = {};
  const order: PortName[] = [];
  const adapters: Partial<Record<PortName, string>> = {};
  const contributions: AdapterContribution[] = [];
  try {
    for (const { port, specifier, adapter, options: adapterOptions, context, where } of checked) {
      const factory = adapter[port] as (o: unknown, c: AdapterContext) => PortTypes[typeof port] | Promise<PortTypes[typeof port]>;
      const instance = await Promise.resolve()
        .then(() => factory(adapterOptions, context))
        .catch((error: unknown) => {
          if (MusterError.is(error)) throw error;
          const reason = error instanceof Error ? error.message : String(error);
          throw new AdapterStartError(specifier, `${where}: adapter '${specifier}' failed to create the ${port} port: ${reason}`, {
            cause: error,
          });
        });
      (ports as Record<PortName, unknown>)[port] = instance;
      order.push(port);
      adapters[port] = adapter.name;
      if (adapter.bindings) contributions.push({ adapter, options: adapterOptions, context });
    }
  } catch (error) {
    for (const name of [...order].reverse()) await ports[name]!.close().catch(() => undefined);
    throw error;
  }
  return recordContributions(new Muster(config, ports, order, adapters), contributions);
}
