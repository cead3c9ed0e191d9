// Certificates for the test servers and for tests: a private CA and serving certificates, made with
// openssl (on every machine this project targets).
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Runs openssl in `cwd`; a failure names the command and carries openssl's own message. */
export function openssl(args, cwd) {
  return new Promise((resolveRun, reject) => {
    execFile('openssl', args, { cwd }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`openssl ${args.join(' ')} failed: ${stderr || err.message}`, { cause: err }));
      else resolveRun();
    });
  });
}

/**
 * A private CA (ca.crt) and a serving certificate it signed (server.crt, server.key; P-256) for
 * `cn` with the subject alternative names `sans` ("IP:127.0.0.1", "DNS:localhost", ...), in `dir`.
 */
export async function makeServerCertificate(dir, { cn, sans }) {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '3650', '-subj', '/CN=muster-testenv-ca'], dir);
  writeFileSync(
    join(dir, 'server.ext'),
    `subjectAltName=${sans.join(',')}\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nbasicConstraints=critical,CA:FALSE\n`,
  );
  await openssl(['req', '-new', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${cn}`], dir);
  const sign = ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '3650'];
  await openssl([...sign, '-extfile', 'server.ext', '-out', 'server.crt'], dir);
  return { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'server.crt'), keyFile: join(dir, 'server.key') };
}

/**
 * A client certificate (client.crt, client.key; P-256) for `cn`, signed by the CA that
 * makeServerCertificate left in `dir`: for servers that require client authentication.
 */
export async function makeClientCertificate(dir, { cn }) {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\nbasicConstraints=critical,CA:FALSE\n');
  await openssl(['req', '-new', ...ec, '-keyout', 'client.key', '-out', 'client.csr', '-subj', `/CN=${cn}`], dir);
  const sign = ['x509', '-req', '-in', 'client.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '3650'];
  await openssl([...sign, '-extfile', 'client.ext', '-out', 'client.crt'], dir);
  return { certFile: join(dir, 'client.crt'), keyFile: join(dir, 'client.key') };
}
