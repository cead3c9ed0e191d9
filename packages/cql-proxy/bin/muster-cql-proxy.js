#!/usr/bin/env node
// Committed so that npm links the bin at `npm ci`, before dist/ is built (npm skips a bin whose
// file is missing). It only loads the built CLI, and says how to build it when it is not there.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  console.error(
    'muster-cql-proxy: the proxy is not built yet (no dist/cli.js). In the Muster repository run `npm run build` first ' +
      '(npm start and npm test build it too).',
  );
  process.exit(1);
}
await import(cli.href);
