import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
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
 * Imports the adapter a config names: a built-in name, an npm package (resolved from the
 * config's folder first, so an application's own dependencies are found), or a file path
 * relative to the config. Nothing else is imported.
 */
export async function importAdapter(specifier: string, baseDir: string): Promise<DefinedAdapter> {
  const pkg = builtinAdapters[specifier] ?? specifier;
  let module: { default?: unknown };
  let where = pkg;
  if (isPath(pkg)) {
    where = pkg.startsWith('file:') ? pkg : pathToFileURL(resolve(baseDir, pkg)).href;
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
      // Not beside Muster: look in the node_modules of the config's own folder.
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

function resolveFrom(pkg: string, baseDir: string): string | undefined {
  try {
    return pathToFileURL(createRequire(join(baseDir, 'noop.js')).resolve(pkg)).href;
  } catch {
    return undefined;
  }
}
