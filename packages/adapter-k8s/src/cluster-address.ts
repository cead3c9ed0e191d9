/**
 * Where a cluster is reached: its `server` URL and its `proxy-url`. kubectl accepts http, https and
 * socks5 proxies; this adapter speaks to HTTP proxies (CONNECT for an https:// server, plain
 * forwarding for an http:// one) and says so for the others rather than connecting directly
 * behind the user's back.
 */
export interface ClusterAddress {
  readonly server: URL;
  readonly proxy?: URL | undefined;
}

/** `refuse` turns a problem into the caller's error, which names where the cluster was written. */
export function clusterAddress(
  server: string,
  proxyUrl: string | undefined,
  refuse: (problem: string, cause?: unknown) => Error,
): ClusterAddress {
  let url: URL;
  try {
    url = new URL(server);
  } catch (cause) {
    throw refuse(`has server '${server}', which is not a URL`, cause);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse(`has server ${server}; write an https:// (or http://) URL`);
  if (!proxyUrl) return { server: url };
  let proxy: URL;
  try {
    proxy = new URL(proxyUrl);
  } catch (cause) {
    throw refuse(`has proxy-url '${proxyUrl}', which is not a URL; write http://host:port`, cause);
  }
  if (proxy.protocol === 'http:' || (proxy.protocol === 'https:' && url.protocol === 'https:')) return { server: url, proxy };
  throw refuse(
    `has proxy-url ${proxy.protocol}// (${proxyUrl}), which this adapter does not speak: use an http:// proxy (HTTP CONNECT) or reach the server directly`,
  );
}

/** The Proxy-Authorization header for credentials in the proxy URL (`http://user:pass@host:port`). */
export function proxyAuthorization(proxy: URL): Record<string, string> {
  if (!proxy.username) return {};
  const basic = Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64');
  return { 'Proxy-Authorization': `Basic ${basic}` };
}
