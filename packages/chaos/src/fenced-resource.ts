/**
 * The resource the contenders' protected writes go to. It judges one write at a time, in arrival
 * order (the order a write's `seq` records), and answers whether it was accepted.
 */
export interface FencedResourcePort {
  /** `id` is unique per write in the run; `who` the contender incarnation. */
  write(token: bigint, who: string, id: string): Promise<boolean>;
  /** What the resource says after the run (a line for the log), then releases what it holds. */
  close(): Promise<string | undefined>;
}
