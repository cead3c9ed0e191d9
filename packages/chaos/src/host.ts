#!/usr/bin/env node
// A contender host: the orchestrator forks it and sends it contenders (one per process for shared
// backends, all of them in one process for in-process adapters such as static) and, optionally,
// the heartbeat observer. Reports go back over the IPC channel.
import { Contender, type ContenderLink } from './contender.js';
import { observe } from './observer.js';
import type { HostCommand, HostReport } from './protocol.js';
import { realNow } from './stepped-clock.js';

const contenders = new Map<string, Contender>();
const pendingWrites = new Map<number, (accepted: boolean) => void>();
const stopping = new AbortController();
let nextRid = 0;
const lastLogged = new Map<string, string>();
/** Sum of the '*' steps: the host's clock, which contenders started later see too. */
let hostOffset = 0;

function send(report: HostReport): void {
  process.send?.(report);
}

function linkFor(who: string): ContenderLink {
  return {
    event: (event) => send({ t: 'event', event }),
    write: (write) =>
      new Promise<boolean>((resolve) => {
        const rid = nextRid++;
        pendingWrites.set(rid, resolve);
        send({ t: 'write', rid, ...write });
      }),
    log: (message) => {
      // A partition makes every beat fail the same way: say it once per run of identical failures.
      if (message === lastLogged.get(who)) return;
      lastLogged.set(who, message);
      send({ t: 'log', who, message });
    },
  };
}

async function handle(command: HostCommand): Promise<void> {
  switch (command.t) {
    case 'spawn': {
      const spec = { ...command.spec, clockOffset: command.spec.clockOffset + hostOffset };
      const contender = new Contender(spec, linkFor(spec.who));
      contenders.set(spec.who, contender);
      await contender.start();
      return;
    }
    case 'observe':
      await observe(command.spec, (members) => send({ t: 'view', at: realNow(), members }), stopping.signal);
      return;
    case 'crash':
      contenders.get(command.who)?.crash();
      contenders.delete(command.who);
      return;
    case 'step':
      // '*': the host's own clock jumped, which every contender in it sees.
      if (command.who === '*') hostOffset += command.ms;
      for (const [who, contender] of contenders) if (command.who === '*' || who === command.who) contender.clock.offset += command.ms;
      return;
    case 'ack':
      pendingWrites.get(command.rid)?.(command.accepted);
      pendingWrites.delete(command.rid);
      return;
  }
}

process.on('message', (command: HostCommand) => {
  handle(command).catch((error: unknown) =>
    send({
      t: 'log',
      who: 'host',
      message: `${command.t} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    }),
  );
});

// The orchestrator going away ends the host (a contender must never outlive its run).
process.on('disconnect', () => {
  stopping.abort();
  void Promise.allSettled([...contenders.values()].map((c) => c.close())).finally(() => process.exit(0));
});
