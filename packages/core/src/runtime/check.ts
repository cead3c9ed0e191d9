import { AdapterInvalidError, AdapterLoadError, AdapterNotFoundError, AdapterVersionError, MusterError } from '../errors.js';
import type { AdapterContext, DefinedAdapter } from './adapter.js';
import { ConfigSource, loadConfig, portNames, supportedVersion, type LoadOptions, type MusterConfig, type PortName } from './config.js';
import { checkCoreRange } from './core-range.js';
import { importAdapter } from './resolve.js';
import { formatPath, s, type Path } from './schema.js';
import { systemClock, type Clock } from '../clock.js';

export interface CheckOptions extends LoadOptions {
  readonly clock?: Clock;
  /** Adapters already imported, by the name a config uses for them (see CreateOptions). */
  readonly adapters?: Readonly<Record<string, DefinedAdapter>>;
  /**
   * The application's own top-level sections (`proxy`). When given, any other top-level key
   * besides version and the ports is an error: a misspelt `heartbeats:` must not run silently
   * without a HeartbeatStore. Omitted, other sections are left to the application.
   */
  readonly sections?: readonly string[];
}

/** One configured port: its adapter and its options, validated and converted. */
export interface CheckedPort {
  readonly port: PortName;
  readonly specifier: string;
  readonly adapter: DefinedAdapter;
  readonly options: unknown;
  readonly context: AdapterContext;
  /** Where the config selects the adapter (`file:line:col: lock.adapter`), for errors of its start. */
  readonly where: string;
}

export interface CheckedConfig {
  readonly source: ConfigSource;
  readonly ports: readonly CheckedPort[];
  /** This process's Discovery id where the options decide it (static `self`). */
  readonly selfId: string | undefined;
}

const sectionSchema = s.object({ adapter: s.string({ minLength: 1 }), options: s.optional(s.unknown()) });

/**
 * Everything createMuster validates, without creating a port: the version, each port section,
 * that its adapter is found and provides the port, its options against the adapter's schema, and
 * the adapter's own `check`. Adapters are imported (their modules only), nothing is started.
 */
export async function checkConfig(input: string | URL | MusterConfig | ConfigSource, options: CheckOptions = {}): Promise<CheckedConfig> {
  const config = await loadConfig(input, options);
  const version = config.data.version;
  if (version !== undefined && version !== supportedVersion) {
    throw config.error(['version'], `unsupported config version ${JSON.stringify(version)}; this Muster reads version ${supportedVersion}`);
  }
  if (options.sections) {
    const known = ['version', ...portNames, ...options.sections];
    const unknown = Object.keys(config.data).filter((key) => !known.includes(key));
    if (unknown.length > 0) {
      throw config.issuesError(unknown.map((key) => ({ path: [key], message: `unknown section; expected one of ${known.join(', ')}` })));
    }
  }
  const sections: [PortName, { adapter: string; options?: unknown }][] = [];
  for (const port of portNames) {
    if (config.data[port] !== undefined) sections.push([port, config.parse([port], sectionSchema)]);
  }

  // One import per distinct adapter, all started at once; nothing unselected is touched.
  const loaded = new Map<string, DefinedAdapter>();
  await Promise.all(
    [...new Set(sections.map(([, section]) => section.adapter))].map(async (specifier) => {
      const port = sections.find(([, section]) => section.adapter === specifier)![0];
      try {
        const adapter = options.adapters?.[specifier] ?? (await importAdapter(specifier, config.dir));
        checkCoreRange(specifier, adapter);
        loaded.set(specifier, adapter);
      } catch (error) {
        throw positioned(error, describe(config, [port, 'adapter']));
      }
    }),
  );

  const clock = options.clock ?? systemClock;
  const ports: CheckedPort[] = [];
  let selfId: string | undefined;
  for (const [port, section] of sections) {
    const adapter = loaded.get(section.adapter)!;
    if (typeof adapter[port] !== 'function') {
      throw config.error(
        [port, 'adapter'],
        `adapter '${section.adapter}' does not provide ${port}; it provides ${adapter.provides.join(', ')}`,
      );
    }
    const adapterOptions = config.parse([port, 'options'], adapter.options);
    const context: AdapterContext = {
      port,
      clock,
      configDir: config.dir,
      describe: (path: Path) => describe(config, [port, 'options', ...path]),
    };
    const found = await adapter.check?.(port, adapterOptions, context);
    if (port === 'discovery') selfId = found?.selfId;
    ports.push({ port, specifier: section.adapter, adapter, options: adapterOptions, context, where: describe(config, [port, 'adapter']) });
  }
  return { source: config, ports, selfId };
}

function describe(config: ConfigSource, path: Path): string {
  const pos = config.positionOf(path);
  return `${pos.file ? `${pos.file}${pos.line ? `:${pos.line}:${pos.column}` : ''}` : '(config object)'}: ${formatPath(path)}`;
}

/** The same adapter error, its message starting with where the config names the adapter. */
function positioned(error: unknown, where: string): unknown {
  if (!MusterError.is(error)) return error;
  const specifier = (error as { specifier?: string }).specifier ?? '';
  const message = `${where}: ${error.message}`;
  if (error.code === 'MUSTER_ADAPTER_NOT_FOUND') return new AdapterNotFoundError(specifier, message, { cause: error });
  if (error.code === 'MUSTER_ADAPTER_LOAD') return new AdapterLoadError(specifier, message, { cause: error });
  if (error.code === 'MUSTER_ADAPTER_INVALID') return new AdapterInvalidError(specifier, message);
  if (AdapterVersionError.is(error, 'MUSTER_ADAPTER_VERSION')) {
    const { range, coreVersion } = error as AdapterVersionError;
    return new AdapterVersionError(specifier, range, coreVersion, { cause: error, where });
  }
  return error;
}
