// One cold invocation: import the handler (argv[2], a file path), call it once, print the result.
// run.mjs times this process from spawn to the result line.
import { pathToFileURL } from 'node:url';
const { handler } = await import(pathToFileURL(process.argv[2]).href);
const result = await handler({});
process.stdout.write(`${JSON.stringify(result)}\n`);
