import type { ContainerModuleLoadOptions } from 'inversify';
import type { Clock } from '../clock.js';
import { AdapterInvalidError } from '../errors.js';
import type { Discovery } from '../ports/discovery.js';
import type { HeartbeatStore } from '../ports/heartbeat.js';
import type { Lock } from '../ports/lock.js';
import type { PortName } from './config.js';
import type { Schema } from './schema.js';

const adapterBrand = Symbol.for('muster.adapter');

/** What a port factory gets besides its validated options. */
export interface AdapterContext {
  readonly port: PortName;
  readonly clock: Clock;
  /** Folder of the config file (else the working directory): resolve relative paths in options from here. */
  readonly configDir: string;
  /** Where the config named this port's options, for positioned errors found late (e.g. a file the options point to). */
  readonly describe: (path: readonly (string | number)[]) => string;
}

/** What an adapter's `check` learned from its options without starting anything. */
export interface AdapterCheck {
  /** The id this process will have in Discovery (static: the member `self` names). */
  readonly selfId?: string;
}

export interface AdapterDefinition<O = unknown> {
  /** Short name used in messages (`static`, `kubernetes`). */
  readonly name: string;
  /**
   * The `@muster/core` versions this adapter was built for, as a semver range (`^0.1.0`). The
   * runtime refuses to load the adapter into any other core with AdapterVersionError, instead of
   * failing later on an API that changed. Omitted, nothing is checked (write it: it costs nothing).
   */
  readonly core?: string;
  /** Validates and converts `options:` (durations to ms, defaults filled in). */
  readonly options: Schema<O>;
  // Method signatures (not function-typed properties) so that an adapter for any options type is
  // assignable to DefinedAdapter<unknown>, as the runtime holds them.
  discovery?(options: O, context: AdapterContext): Discovery | Promise<Discovery>;
  lock?(options: O, context: AdapterContext): Lock | Promise<Lock>;
  heartbeat?(options: O, context: AdapterContext): HeartbeatStore | Promise<HeartbeatStore>;
  /**
   * Checks beyond the schema that need no server and start nothing (a `self` that names no
   * member, two members with one id). The runtime calls it for each port before that port's
   * factory, and `checkConfig` (a proxy's --check) calls only it, so both report the same problems.
   * It may read local files the start reads (a static members file), hence a promise is allowed.
   */
  check?(port: PortName, options: O, context: AdapterContext): AdapterCheck | void | Promise<AdapterCheck | void>;
  /**
   * Services this adapter adds to an application's inversify container beside the port (say, the
   * client it built, for the application to reuse), when the application loads Muster with
   * `musterModule` from `@muster/core/inversify`. Called once for each port the adapter serves,
   * after its factory, with the container module's own load options: bind through them, so the
   * adapter never imports inversify. The runtime removes these bindings when the module unloads.
   */
  bindings?(container: ContainerModuleLoadOptions, options: O, context: AdapterContext): void;
}

export interface DefinedAdapter<O = unknown> extends AdapterDefinition<O> {
  /** The ports this adapter provides, derived from its factories. */
  readonly provides: readonly PortName[];
  readonly [adapterBrand]: true;
}

/**
 * Declares an adapter. An adapter package default-exports the result; the runtime imports the
 * package only when a config selects it, validates `options` with the schema, and calls the
 * factory of each port the config assigns to it.
 */
export function defineAdapter<O>(definition: AdapterDefinition<O>): DefinedAdapter<O> {
  const provides = (['discovery', 'lock', 'heartbeat'] as const).filter((p) => typeof definition[p] === 'function');
  if (!definition.name || provides.length === 0) {
    throw new AdapterInvalidError(
      definition.name ?? '(unnamed)',
      'defineAdapter() needs a name and at least one of discovery, lock, heartbeat',
    );
  }
  return Object.freeze({ ...definition, provides, [adapterBrand]: true as const });
}

export function isAdapter(value: unknown): value is DefinedAdapter {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[adapterBrand] === true;
}
