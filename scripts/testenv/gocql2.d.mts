/** The gocql v2 module version the check program pins. */
export const GOCQL2_VERSION: string;
/** The path of the gocql v2 check program, built into the testenv cache on first use. */
export function gocql2Check(): Promise<string>;
