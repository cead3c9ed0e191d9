// Shared by the chaos test files: the seed (MUSTER_CHAOS_SEED replays a run), a check that the
// contender host is built (contenders are separate node processes running dist/), and printing.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runChaos, type RunOptions, type RunResult } from '@muster/chaos';

const host = fileURLToPath(new URL('../dist/host.js', import.meta.url));

export function seedFor(fallback: number): number {
  const env = process.env.MUSTER_CHAOS_SEED;
  return env === undefined ? fallback : Number(env);
}

export async function chaos(options: Omit<RunOptions, 'log'>): Promise<RunResult> {
  if (!existsSync(host)) throw new Error(`${host} is missing: contenders run the built package; run npx tsc -b first`);
  const lines: string[] = [];
  const result = await runChaos({ ...options, log: (line) => lines.push(line) });
  // The table is the point of these runs: always show it, with the seed that replays it.
  console.log(`${result.table}\nreplay with MUSTER_CHAOS_SEED=${result.seed}\n${lines.join('\n')}`);
  return result;
}
