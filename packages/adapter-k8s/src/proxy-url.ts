/**
 * A cluster's `proxy-url`. kubectl accepts http, https and socks5 proxies; this adapter speaks to
 * HTTP proxies (CONNECT for an https:// server, plain forwarding for an http:// one) and says so
 * for the others rather than connecting directly behind the user's back.
 */
export function parseProxyUrl(text: string, server: URL, refuse: (problem: string) => Error): URL {
  let proxy: URL;
  try {
    proxy = new URL(text);
  } catch {
    throw refuse(`'${text}', which is not a URL; write http://host:port`);
  }
  if (proxy.protocol === 'http:' || (proxy.protocol === 'https:' && server.protocol === 'https:')) return proxy;
  throw refuse(
    `${proxy.protocol}// (${text}), which this adapter does not speak: use an http:// proxy (HTTP CONNECT), or pass a KubeConfig from @kubernetes/client-node only for auth and reach the server directly`,
  );
}

/** The Proxy-Authorization header for credentials in the proxy URL (`http://user:pass@host:port`). */
export function proxyAuthorization(proxy: URL): Record<string, string> {
  if (!proxy.username) return {};
  const basic = Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64');
  return { 'Proxy-Authorization': `Basic ${basic}` };
}
