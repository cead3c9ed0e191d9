import { readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AdapterInvalidError, AdapterLoadError, AdapterNotFoundError } from '../errors.js';
import { isAdapter, type DefinedAdapter } from './adapter.js';

/** Built-in adapter names and the packages that implement them. */
export const builtinAdapters: Readonly<Record<string, string>> = {
  static: '@muster/adapter-static',
  kubernetes: '@muster/adapter-k8s',
  consul: '@muster/adapter-consul',
};

const isPath = (s: string) => s.startsWith('./') || s.startsWith('../') || isAbsolute(s) || s.startsWith('file:');

function notInstalled(specifier: string, pkg: string, cause: unknown): AdapterNotFoundError {
  const builtin = Object.entries(builtinAdapters).find(([, p]) => p === pkg)?.[0];
  const hint = builtin
    ? `the built-in adapter '${builtin}' lives in ${pkg}: run npm install ${pkg}`
    : `install it (npm install ${pkg}), or use a built-in (${Object.keys(builtinAdapters).join(', ')}) or a path starting with ./`;
  return new AdapterNotFoundError(specifier, `adapter '${specifier}': package ${pkg} is not installed; ${hint}`, { cause });
}

/**
 * Imports the adapter a config names: a built-in name, an npm package (resolved beside Muster
 * first, where its own adapters match its core, then from the config's folder up, so an
 * application's own dependencies are found), or a file path relative to the config. Nothing else
 * is imported.
 */
export async function importAdapter(specifier: string, baseDir: string): Promise<DefinedAdapter> {
  const pkg = builtinAdapters[specifier] ?? specifier;
  let module: { default?: unknown };
  let where = pkg;
  if (isPath(pkg)) {
    // A file: URL may be relative too (file:./x.mjs): to the config's folder, as a path is.
    where = pkg.startsWith('file:')
      ? new URL(pkg, pathToFileURL(join(resolve(baseDir), '/'))).href
      : pathToFileURL(resolve(baseDir, pkg)).href;
    module = await load(specifier, where, pkg);
  } else {
    if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(\/[\w.-]+)*$/i.test(pkg)) {
      throw new AdapterNotFoundError(
        specifier,
        `adapter '${specifier}' is neither a built-in (${Object.keys(builtinAdapters).join(', ')}), an npm package name, nor a path starting with ./`,
      );
    }
    try {
      module = await load(specifier, pkg, pkg);
    } catch (error) {
      // Not beside Muster (whose own adapters match its core): look in the node_modules of the config's folder and up.
      const local = AdapterNotFoundError.is(error, 'MUSTER_ADAPTER_NOT_FOUND') ? resolveFrom(pkg, baseDir) : undefined;
      if (!local) throw error;
      where = local;
      module = await load(specifier, local, pkg);
    }
  }
  const definition = module.default;
  if (!isAdapter(definition)) {
    throw new AdapterInvalidError(specifier, `adapter '${specifier}' (${where}) does not default-export a defineAdapter() result`);
  }
  return definition;
}

async function load(specifier: string, url: string, pkg: string): Promise<{ default?: unknown }> {
  try {
    return (await import(url)) as { default?: unknown };
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    const message = (cause as Error).message ?? '';
    // Node says ERR_MODULE_NOT_FOUND; other loaders (jest's) say MODULE_NOT_FOUND.
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || code === 'ERR_UNSUPPORTED_DIR_IMPORT') {
      // Only when the adapter itself is what is missing; a missing dependency of it is a load error.
      const missing = /Cannot find (?:module|package) '([^']+)'/.exec(message)?.[1];
      const path = url.replace(/^file:\/\//, '');
      if (isPath(pkg) && missing !== undefined && (missing === path || missing === url)) {
        throw new AdapterNotFoundError(specifier, `adapter '${specifier}': no file at ${path}`, { cause });
      }
      if (!isPath(pkg) && url === pkg && missing === pkg) throw notInstalled(specifier, pkg, cause);
    }
    throw new AdapterLoadError(specifier, `adapter '${specifier}' (${url}) failed to load: ${message}`, { cause });
  }
}

/**
 * The file URL `pkg` names in the nearest node_modules at or above `baseDir`, resolved as an
 * `import` would (the `exports` conditions node, import, default; else `main`, else index.js);
 * undefined when no such folder has it. require.resolve would not do: it reads the require
 * conditions, so a package that exports only `import` looked not installed.
 */
function resolveFrom(pkg: string, baseDir: string): string | undefined {
  const [name, subpath] = splitPackage(pkg);
  for (let dir = resolve(baseDir); ; dir = dirname(dir)) {
    const root = join(dir, 'node_modules', name);
    const manifest = readManifest(join(root, 'package.json'));
    if (manifest) {
      const target =
        manifest.exports !== undefined ? exported(manifest.exports, subpath) : subpath === '.' ? (manifest.main ?? 'index.js') : subpath;
      // The real path, as Node's own resolution gives it: one module instance however it is reached (workspace symlinks).
      return target === undefined ? undefined : pathToFileURL(realpathOr(join(root, target))).href;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // missing: the import says so, naming this path
  }
}

/** `@scope/name/sub` → [`@scope/name`, `./sub`]; `name` → [`name`, `.`]. */
function splitPackage(pkg: string): [string, string] {
  const parts = pkg.split('/');
  const size = pkg.startsWith('@') ? 2 : 1;
  const rest = parts.slice(size).join('/');
  return [parts.slice(0, size).join('/'), rest ? `./${rest}` : '.'];
}

function readManifest(path: string): { exports?: unknown; main?: string } | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as { exports?: unknown; main?: string };
  } catch {
    return undefined;
  }
}

/** The target `exports` gives `subpath` under the import conditions (no patterns: adapters export their entry). */
function exported(exports: unknown, subpath: string): string | undefined {
  const keyed =
    typeof exports === 'object' && exports !== null && !Array.isArray(exports) && Object.keys(exports).some((k) => k.startsWith('.'));
  const entry = keyed ? (exports as Record<string, unknown>)[subpath] : subpath === '.' ? exports : undefined;
  return conditional(entry);
}

function conditional(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  if (Array.isArray(entry)) return entry.map(conditional).find((t) => t !== undefined);
  if (typeof entry !== 'object' || entry === null) return undefined;
  for (const [condition, value] of Object.entries(entry)) {
    if (condition === 'node' || condition === 'import' || condition === 'default') {
      const target = conditional(value);
      if (target !== undefined) return target;
    }
  }
  return undefined;
}
