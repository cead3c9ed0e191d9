/** The path of the gocql steady-load program, built into the testenv cache on first use. */
export function gocqlSteadyLoad(): Promise<string>;
