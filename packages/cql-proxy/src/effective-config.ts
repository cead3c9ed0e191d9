import { accessSync, constants } from 'node:fs';
import { isIPv6 } from 'node:net';
import { resolve } from 'node:path';
import { checkConfig, redactSecrets, type CheckedConfig, type ConfigSource, type MusterConfig } from '@muster/core';
import type { DefinedAdapter } from '@muster/core/adapter';
import { ConfigError } from '@muster/core';
import { envVariable, proxySchema, readProxyConfig, type ProxyConfig } from './config.js';
import { isAdvertisable } from './virtual/address.js';

/** Top-level sections the proxy reads besides version and the ports; anything else is a typo. */
export const proxySections = ['proxy'] as const;

export interface EffectiveConfigOptions {
  /** Values that win over everything else (the CLI's --listen / --http). */
  readonly overrides?: Partial<ProxyConfig>;
  /** MUSTER_PROXY_* variables and ${VAR} references are read from here (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Adapters already imported, by the name the config uses (bundling). */
  readonly adapters?: Readonly<Record<string, DefinedAdapter>>;
}

/** The config a proxy runs with: every port checked against its adapter, the proxy section filled in. */
export interface EffectiveConfig {
  readonly checked: CheckedConfig;
  readonly proxy: ProxyConfig;
}

/**
 * Every validation a start runs, and nothing started: the document's sections, each port's adapter
 * (imported, not created) and options, the adapter's own checks (a static `self` that names no
 * member), then the proxy section with the same instanceId the run will use. `--check` prints
 * what this returns; the run starts from it.
 */
export async function loadEffectiveConfig(
  input: string | URL | MusterConfig | ConfigSource,
  options: EffectiveConfigOptions = {},
): Promise<EffectiveConfig> {
  const env = options.env ?? process.env;
  const checked = await checkConfig(input, {
    sections: proxySections,
    env,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.adapters ? { adapters: options.adapters } : {}),
  });
  const proxy = { ...readProxyConfig(checked.source, checked.selfId, env), ...options.overrides };
  checkAddresses(proxy, checked.source, env);
  checkPorts(proxy, checked.source, env);
  checkTlsFiles(proxy, checked.source, env);
  checkStaticService(checked, proxy);
  return { checked, proxy };
}

/**
 * Static members that name a service list as empty for any other: a proxy whose own service differs
 * would see no member but itself, with nothing to say so. Refused at the adapter's `service`.
 */
function checkStaticService(checked: CheckedConfig, proxy: ProxyConfig): void {
  const discovery = checked.ports.find((p) => p.port === 'discovery');
  const service = (discovery?.options as { service?: string } | undefined)?.service;
  if (discovery?.specifier !== 'static' || service === undefined || service === proxy.service) return;
  throw checked.source.error(
    ['discovery', 'options', 'service'],
    `the members are listed for service '${service}', but the proxy's service is '${proxy.service}' (proxy.service): it would see no member but itself; name one service in both, or leave this one out`,
  );
}

/** A config error at `path` of the proxy section, or naming the MUSTER_PROXY_* variable that set the value. */
function settingError(source: ConfigSource, env: NodeJS.ProcessEnv, path: readonly string[], problem: string, cause?: unknown) {
  const variable = envVariable(path);
  return env[variable] !== undefined
    ? new ConfigError('', problem, { setting: variable }, { cause })
    : source.error(['proxy', ...path], problem, { cause });
}

/**
 * Addresses the schema's patterns only shape: what drivers are told to dial must be an IP address
 * that is not the unspecified one (the inet columns carry no host name; the same rule as the
 * virtual cluster's), and a contact point written with colons only must be an IPv6 address.
 */
function checkAddresses(proxy: ProxyConfig, source: ConfigSource, env: NodeJS.ProcessEnv): void {
  const advertised = proxy.advertise?.address;
  if (advertised !== undefined && !isAdvertisable(advertised)) {
    throw settingError(
      source,
      env,
      ['advertise', 'address'],
      `${JSON.stringify(advertised)} is not an IP address drivers can dial: not a host name, 0.0.0.0 or :: (drivers read it from inet columns)`,
    );
  }
  proxy.backend.contactPoints.forEach((point, i) => {
    const bracketed = /^\[([^\]]+)\]/.exec(point)?.[1];
    const bareIPv6 = bracketed === undefined && point.indexOf(':') !== point.lastIndexOf(':');
    if ((bracketed !== undefined && !isIPv6(bracketed)) || (bareIPv6 && !isIPv6(point))) {
      // A list from MUSTER_PROXY_BACKEND_CONTACT_POINTS is named by the variable; from the file, by its item.
      const variable = envVariable(['backend', 'contactPoints']);
      const problem = `${JSON.stringify(point)} is not an IPv6 address (write [address]:port for one with a port)`;
      throw env[variable] !== undefined
        ? new ConfigError('', problem, { setting: variable })
        : source.error(['proxy', 'backend', 'contactPoints', i], problem);
    }
  });
}

/** The CQL and HTTP listeners on one port of one address: the second could never listen. */
function checkPorts(proxy: ProxyConfig, source: ConfigSource, env: NodeJS.ProcessEnv): void {
  const { listen, http } = proxy;
  const anyAddress = (host: string) => host === '0.0.0.0' || host === '::' || host === '';
  if (listen.port === 0 || listen.port !== http.port) return;
  if (listen.host !== http.host && !anyAddress(listen.host) && !anyAddress(http.host)) return;
  throw settingError(
    source,
    env,
    ['http', 'port'],
    `${http.port} is the CQL listener's port too (proxy.listen.port): give the HTTP endpoints another`,
  );
}

/**
 * The TLS files the start reads: one it cannot read is a config error at its place (or naming the
 * MUSTER_PROXY_* variable that set it), found by --check too.
 */
function checkTlsFiles(proxy: ProxyConfig, source: ConfigSource, env: NodeJS.ProcessEnv): void {
  const { tls } = proxy;
  const backend = proxy.backend.tls;
  const files: [readonly string[], string | undefined][] = [
    [['tls', 'certFile'], tls?.certFile],
    [['tls', 'keyFile'], tls?.keyFile],
    [['tls', 'caFile'], tls?.caFile],
    [['backend', 'tls', 'caFile'], backend?.caFile],
    [['backend', 'tls', 'certFile'], backend?.certFile],
    [['backend', 'tls', 'keyFile'], backend?.keyFile],
  ];
  for (const [path, file] of files) {
    if (file === undefined) continue;
    try {
      accessSync(resolve(source.dir, file), constants.R_OK);
    } catch (cause) {
      throw settingError(source, env, path, `cannot read ${file} (${(cause as NodeJS.ErrnoException).code ?? String(cause)})`, cause);
    }
  }
}

/** The effective config as --check prints it and the start logs it: defaults filled in, secrets redacted by schema. */
export function printableConfig({ checked, proxy }: EffectiveConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (checked.source.data.version !== undefined) out.version = checked.source.data.version;
  for (const { port, specifier, adapter, options } of checked.ports) {
    out[port] = { adapter: specifier, options: redactSecrets(adapter.options, options) };
  }
  out.proxy = redactSecrets(proxySchema, proxy);
  return out;
}
