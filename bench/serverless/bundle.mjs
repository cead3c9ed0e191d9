// esbuild bundles of the serverless handler with only the adapter its config selects.
//
// The runtime imports adapters by name at run time (import(specifier)), which a bundler cannot
// follow. So the adapter is made an entry point of the bundle, next to the handler, and the
// config names it by path (`adapter: ./adapter-static.mjs`, resolved beside the handler or the
// YAML file). With code splitting, core is one shared chunk, not copied into both.
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(join(root, 'package.json'));
export const packages = {
  static: '@muster/adapter-static',
  consul: '@muster/adapter-consul',
  kubernetes: '@muster/adapter-k8s',
};

/** Builds handler + one adapter into a fresh folder outside the repo (no node_modules above it). */
export async function bundle(adapter, { minify = true } = {}) {
  const outdir = mkdtempSync(join(tmpdir(), `muster-serverless-${adapter}-`));
  const result = await build({
    entryPoints: {
      handler: join(root, 'examples/serverless/dist/handler.js'),
      [`adapter-${adapter}`]: require.resolve(packages[adapter]),
    },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir,
    outExtension: { '.js': '.mjs' },
    minify,
    metafile: true,
    logLevel: 'error',
    // yaml's "node" export is CommonJS, and a code-split import() of a CommonJS chunk loses its
    // named exports (core does `const { parseDocument } = await import('yaml')`). Its ESM build
    // runs on Node as well.
    alias: { yaml: join(dirname(require.resolve('yaml/package.json')), 'browser', 'index.js') },
    // Some CommonJS dependencies call require(); give the ESM bundle one.
    banner: { js: "import { createRequire as __muster_cr } from 'node:module'; const require = __muster_cr(import.meta.url);" },
  });
  const files = readdirSync(outdir).map((name) => {
    const bytes = readFileSync(join(outdir, name));
    return { name, size: statSync(join(outdir, name)).size, gzip: gzipSync(bytes).length };
  });
  const inputs = Object.keys(result.metafile.inputs).map((p) => relative(root, join(process.cwd(), p)));
  return {
    outdir,
    files,
    inputs,
    /** Files a first invocation loads: the handler, the adapter and the chunks they import statically. */
    startup: startupFiles(result.metafile, outdir),
  };
}

function startupFiles(metafile, outdir) {
  const seen = new Set();
  const visit = (path) => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const imp of metafile.outputs[path]?.imports ?? []) if (imp.kind === 'import-statement' && !imp.external) visit(imp.path);
  };
  // Our two entry points (a dynamically imported module, like yaml, is an entry point to esbuild too).
  for (const path of Object.keys(metafile.outputs)) if (/\/(handler|adapter-[a-z]+)\.mjs$/.test(path)) visit(path);
  return [...seen].map((p) => p.split('/').pop());
}

export function mentions(inputs, needle) {
  return inputs.filter((p) => p.includes(needle));
}
