// A driver's check program run as a child process: one command per line on its stdin, one JSON
// line back per command (the first line says whether it connected). The proxies can be stopped
// and started between commands while the driver keeps its session.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

export class CheckProgram {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #lines: string[] = [];
  readonly #name: string;
  #waiter: (() => void) | undefined;
  #stderr = '';

  constructor(name: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env) {
    this.#name = name;
    this.#child = spawn(command, args, { env });
    createInterface({ input: this.#child.stdout }).on('line', (line) => {
      this.#lines.push(line);
      this.#waiter?.();
    });
    this.#child.stderr.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString()).slice(-4000);
    });
    this.#child.on('exit', () => this.#waiter?.());
  }

  async #line(ms: number): Promise<unknown> {
    const deadline = Date.now() + ms;
    while (this.#lines.length === 0) {
      if (this.#child.exitCode !== null) throw new Error(`${this.#name} exited (${this.#child.exitCode}): ${this.#stderr}`);
      if (Date.now() > deadline) throw new Error(`no answer from ${this.#name} in ${ms} ms: ${this.#stderr}`);
      await new Promise<void>((resolve) => {
        this.#waiter = resolve;
        setTimeout(resolve, 1000).unref();
      });
    }
    const line = this.#lines.shift()!;
    try {
      return JSON.parse(line);
    } catch {
      throw new Error(`${this.#name} printed a line that is not JSON: ${line}\n${this.#stderr}`);
    }
  }

  /** The first line: resolves with it once the driver has connected, throws with its error otherwise. */
  async connected<T extends object>(ms = 120_000): Promise<T> {
    const first = (await this.#line(ms)) as T & { connected?: boolean; error?: string };
    if (!first.connected) throw new Error(`${this.#name} did not connect: ${first.error}`);
    return first;
  }

  async ask<T>(command: string, ms = 120_000): Promise<T> {
    this.#child.stdin.write(`${command}\n`);
    return (await this.#line(ms)) as T;
  }

  /** Asks it to quit, and kills it if it has not within 5 s. */
  stop(): Promise<void> {
    if (this.#child.exitCode !== null) return Promise.resolve();
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    this.#child.stdin.end('quit\n');
    const kill = setTimeout(() => this.#child.kill('SIGKILL'), 5000);
    return exited.finally(() => clearTimeout(kill));
  }
}
