// The programmatic API of @muster/cql-proxy: start a proxy from code, or check a config as --check does.
export { startProxy, type ProxyHandle, type StartProxyOptions } from './start.js';
export { loadEffectiveConfig, printableConfig, type EffectiveConfig, type EffectiveConfigOptions } from './effective-config.js';
export { proxySchema, proxyJsonSchema, type ProxyConfig } from './config.js';
