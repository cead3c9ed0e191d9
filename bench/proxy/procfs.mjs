// What the benchmark reads about other processes from /proc: CPU time, resident memory, and the
// TCP connections a process holds (to count a proxy's client and backend connections).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** CPU seconds (user + system) a process has used; undefined when it is gone. */
export function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in USER_HZ (100) ticks
  } catch {
    return undefined;
  }
}

/**
 * Resident set size now, its anonymous part (the process's own memory: heap, stacks, buffers; the
 * rest is file pages such as the executable's code, shared with other processes running it) and
 * its peak, in MiB, from /proc/<pid>/status.
 */
export function memory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMiB: kib('VmRSS') / 1024, anonMiB: kib('RssAnon') / 1024, peakMiB: kib('VmHWM') / 1024 };
  } catch {
    return { rssMiB: NaN, anonMiB: NaN, peakMiB: NaN };
  }
}

function socketInodes(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      /* closed meanwhile */
    }
  }
  return inodes;
}

/**
 * The established TCP connections (IPv4 and IPv6) that process `pid` holds, as
 * { localPort, remotePort } (IPv4-mapped and loopback both count: the bench runs on loopback).
 */
export function tcpConnections(pid) {
  const inodes = socketInodes(pid);
  const out = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines;
    try {
      lines = readFileSync(table, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '01' || !inodes.has(f[9])) continue; // 01 = ESTABLISHED
      out.push({ localPort: parseInt(f[1].split(':')[1], 16), remotePort: parseInt(f[2].split(':')[1], 16) });
    }
  }
  return out;
}

/** Client connections (to `listenPort`) and backend connections (to `backendPort`) of a proxy. */
export function proxyConnections(pid, listenPort, backendPort) {
  const conns = tcpConnections(pid);
  return {
    clients: conns.filter((c) => c.localPort === listenPort).length,
    backend: conns.filter((c) => c.remotePort === backendPort).length,
  };
}

/** The 1-minute load average (/proc/loadavg): how busy the shared machine was around a phase. */
export function loadAverage() {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}
