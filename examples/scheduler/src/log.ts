/** Structured events: the CLI prints them as JSON lines, the tests read them. */
export type SchedulerLog = (event: string, fields?: Readonly<Record<string, unknown>>) => void;

export const silent: SchedulerLog = () => undefined;

export function jsonLines(who: string, write: (line: string) => void = (line) => process.stdout.write(line)): SchedulerLog {
  return (event, fields = {}) => {
    write(`${JSON.stringify({ at: Date.now(), who, event, ...fields }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}\n`);
  };
}
