/** [consistency] levels (spec §3). */
export const Consistency = {
  ANY: 0x0000,
  ONE: 0x0001,
  TWO: 0x0002,
  THREE: 0x0003,
  QUORUM: 0x0004,
  ALL: 0x0005,
  LOCAL_QUORUM: 0x0006,
  EACH_QUORUM: 0x0007,
  SERIAL: 0x0008,
  LOCAL_SERIAL: 0x0009,
  LOCAL_ONE: 0x000a,
} as const;
export type Consistency = (typeof Consistency)[keyof typeof Consistency];

const names = new Map<number, string>(Object.entries(Consistency).map(([name, value]) => [value, name]));

/** The level's name as servers print it ("LOCAL_QUORUM"), or its hex code if unknown. */
export function consistencyName(level: number): string {
  return names.get(level) ?? `0x${level.toString(16).padStart(4, '0')}`;
}
