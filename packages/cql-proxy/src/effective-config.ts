import { accessSync, constants } from 'node:fs';
import { resolve } from 'node:path';
import { checkConfig, redactSecrets, type CheckedConfig, type ConfigSource, type MusterConfig } from '@muster/core';
import type { DefinedAdapter } from '@muster/core/adapter';
import { ConfigError } from '@muster/core';
import { envVariable, proxySchema, readProxyConfig, type ProxyConfig } from './config.js';

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
      const problem = `cannot read ${file} (${(cause as NodeJS.ErrnoException).code ?? String(cause)})`;
      const variable = envVariable(path);
      throw env[variable] !== undefined
        ? new ConfigError('', problem, { setting: variable }, { cause })
        : source.error(['proxy', ...path], problem, { cause });
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
