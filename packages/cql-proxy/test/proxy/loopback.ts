// The cluster tests put each proxy on its own loopback address with one shared port, as drivers
// dial every peer at its rpc_address on the port they were given. So a port is free only when it
// is free on every one of those addresses (another test's proxies may hold it on 127.0.0.2 while
// 127.0.0.1 is free), and an address the machine does not have is said plainly.
import { createServer } from 'node:net';

/** Listens on `host`:`port` (0: any) and closes again; the port it got, or the bind error. */
function bindOnce(host: string, port: number): Promise<number | NodeJS.ErrnoException> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    server.listen(port, host, () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
}

function missingAddress(host: string, error: NodeJS.ErrnoException): Error {
  return new Error(
    `${host} is not an address of this machine (${error.code}): these tests give each proxy its own loopback address. ` +
      `Linux routes all of 127.0.0.0/8 to lo; elsewhere add it (macOS: sudo ifconfig lo0 alias ${host} up)`,
    { cause: error },
  );
}

/** A port free on every one of `hosts` at the moment of return (the kernel's pick on the first). */
export async function freePortOn(hosts: readonly [string, ...string[]]): Promise<number> {
  const [first, ...others] = hosts;
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await bindOnce(first, 0);
    if (typeof port !== 'number') throw port.code === 'EADDRNOTAVAIL' ? missingAddress(first, port) : port;
    let everywhere = true;
    for (const host of others) {
      const bound = await bindOnce(host, port);
      if (typeof bound === 'number') continue;
      if (bound.code === 'EADDRNOTAVAIL') throw missingAddress(host, bound);
      everywhere = false;
      break;
    }
    if (everywhere) return port;
  }
  throw new Error(`no port was free on all of ${hosts.join(', ')} in 50 tries`);
}
