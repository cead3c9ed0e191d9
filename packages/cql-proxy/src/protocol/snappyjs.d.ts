/** snappyjs ships no types; this is the part `compression.ts` uses (raw Snappy, no framing). */
declare module 'snappyjs' {
  const snappy: {
    compress(input: Uint8Array): Uint8Array;
    /** Throws if the input is not valid Snappy or announces more than `maxLength` bytes. */
    uncompress(input: Uint8Array, maxLength?: number): Uint8Array;
  };
  export default snappy;
}
