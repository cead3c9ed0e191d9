#!/usr/bin/env node
// muster-cql-proxy: run the proxy from a YAML config, or check the config and print it.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, MusterError, type ErrorCode } from '@muster/core';
import { proxyJsonSchema } from './config.js';
import { checkWarnings } from './check-warnings.js';
import { loadEffectiveConfig, printableConfig } from './effective-config.js';

const usage = `Usage: muster-cql-proxy --config <file> [options]

A Cassandra native-protocol proxy that presents the running proxy instances as the cluster.

Options:
  -c, --config <file>   YAML config: discovery / heartbeat adapters and a proxy: section (required)
      --check           validate the config, print the effective config (secrets redacted), exit
      --schema          print the JSON Schema of the proxy: section (for editors), exit
      --listen <h:p>    override proxy.listen (host:port)
      --http <h:p>      override proxy.http (host:port)
  -h, --help            this text
  -v, --version         the version

Environment: MUSTER_PROXY_<PATH> sets one proxy: value, the path in upper snake case
(MUSTER_PROXY_LISTEN_PORT=9043, MUSTER_PROXY_BACKEND_CONTACT_POINTS=10.0.0.1,10.0.0.2).

Precedence, highest first: these flags, MUSTER_PROXY_* variables, the config file (which may
read the environment with \${VAR} or \${VAR:-default}), the built-in defaults.`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function splitHostPort(value: string, flag: string): { host: string; port: number } {
  const match = /^(.*):(\d{1,5})$/.exec(value);
  if (!match) throw new ConfigError('', `expected host:port, got ${JSON.stringify(value)}`, { setting: flag });
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]) };
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string', short: 'c' },
      check: { type: 'boolean' },
      schema: { type: 'boolean' },
      listen: { type: 'string' },
      http: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (values.version) {
    console.log(version());
    return 0;
  }
  if (values.schema) {
    console.log(
      JSON.stringify(
        { $schema: 'https://json-schema.org/draft/2020-12/schema', title: 'muster-cql-proxy proxy: section', ...proxyJsonSchema() },
        null,
        2,
      ),
    );
    return 0;
  }
  if (!values.config) {
    console.error(`muster-cql-proxy: --config is required\n\n${usage}`);
    return 2;
  }
  const overrides = {
    ...(values.listen ? { listen: splitHostPort(values.listen, '--listen') } : {}),
    ...(values.http ? { http: splitHostPort(values.http, '--http') } : {}),
  };
  // --check and the run share every validation and the resulting config (instanceId included).
  const effective = await loadEffectiveConfig(values.config, { overrides });
  if (values.check) {
    for (const warning of checkWarnings(effective)) console.error(`muster-cql-proxy: warning: ${warning}`);
    console.log(JSON.stringify(printableConfig(effective), null, 2));
    return 0;
  }
  const { runProxy } = await import('./proxy/runtime.js');
  await runProxy(effective);
  return 0;
}

/** Exit 2: the config (or an adapter it names) is wrong, as opposed to a failure while running. */
const configProblems: ErrorCode[] = ['MUSTER_CONFIG', 'MUSTER_ADAPTER_NOT_FOUND', 'MUSTER_ADAPTER_INVALID', 'MUSTER_INVALID_ARGUMENT'];

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // Errors say what and where; the stack only helps when debugging the proxy itself.
    const message = error instanceof Error ? error.message : String(error);
    console.error(`muster-cql-proxy: ${process.env.MUSTER_DEBUG && error instanceof Error ? error.stack : message}`);
    process.exitCode = configProblems.some((code) => MusterError.is(error, code)) ? 2 : 1;
  },
);
