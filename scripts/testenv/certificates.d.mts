export function openssl(args: string[], cwd: string): Promise<void>;

export function makeServerCertificate(
  dir: string,
  options: { cn: string; sans: string[] },
): Promise<{ caFile: string; certFile: string; keyFile: string }>;

export function makeClientCertificate(dir: string, options: { cn: string }): Promise<{ certFile: string; keyFile: string }>;
