import os from 'node:os';
import path from 'node:path';
import { ConfigError } from './validate';
import { SPEC_CACHE_OFF } from './openapi';

/**
 * Expands a leading `~` as shells do: `~` and `~/x` are the home directory (`$HOME`, else the
 * account's), then resolves a relative result against `baseDir` when one is given (a config
 * file's directory). `where` names the value in the error: `~name/x` (another account's home) is
 * refused with ConfigError, since Node cannot look it up and a literal `~name` directory was
 * created in its place. Decision: expanded, not refused: pm2's `env`, systemd's `Environment=`
 * and `--flag=~/x` pass `~` through unexpanded, and a config file is no shell.
 */
export function expandPath(value: string, where: string, baseDir?: string): string {
  let out = value;
  if (out === '~' || out.startsWith('~/')) out = path.join(os.homedir(), out.slice(1));
  else if (out.startsWith('~')) throw new ConfigError(`${where}: '${value.split('/')[0]}' (another user's home directory) is not expanded; write the path out in full`);
  return baseDir === undefined ? out : path.resolve(baseDir, out);
}

/** An executable's path: a bare name (`bwrap`, looked up in PATH) stays as it is, as shells do. */
function expandProgram(value: string, where: string, baseDir?: string): string {
  return value.includes('/') || value.startsWith('~') ? expandPath(value, where, baseDir) : value;
}

type Section = Record<string, unknown>;
const section = (value: unknown): Section | undefined => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Section) : undefined);

/**
 * Every path key of a configuration, expanded in place with expandPath: `shell.workspace`,
 * `shell.bwrapPath`, `web.search.executablePath`, `apis[].openApiSpec` (a file, not a URL or
 * inline text), `apis[].specCache` (unless it turns the cache off) and `customToolsets[].module`.
 * `baseDir`: relative paths are resolved against it (a config file's directory); without it they
 * stay relative, to the current directory. `where(key)` names a key for messages.
 */
export function expandPathKeys(input: Section, where: (key: string) => string, baseDir?: string): void {
  const shell = section(input.shell);
  if (typeof shell?.workspace === 'string') shell.workspace = expandPath(shell.workspace, where('shell.workspace'), baseDir);
  if (typeof shell?.bwrapPath === 'string') shell.bwrapPath = expandProgram(shell.bwrapPath, where('shell.bwrapPath'), baseDir);
  const search = section(section(input.web)?.search);
  if (typeof search?.executablePath === 'string') search.executablePath = expandProgram(search.executablePath, where('web.search.executablePath'), baseDir);
  (Array.isArray(input.apis) ? input.apis : []).forEach((item, i) => {
    const api = section(item);
    if (!api) return;
    const method = api.specInputMethod ?? 'url';
    if (typeof api.openApiSpec === 'string' && (method === 'file' || (method === 'url' && !/^https?:\/\//i.test(api.openApiSpec)))) {
      api.openApiSpec = expandPath(api.openApiSpec, where(`apis[${i}].openApiSpec`), baseDir);
    }
    if (typeof api.specCache === 'string' && !SPEC_CACHE_OFF.test(api.specCache)) api.specCache = expandPath(api.specCache, where(`apis[${i}].specCache`), baseDir);
  });
  (Array.isArray(input.customToolsets) ? input.customToolsets : []).forEach((item, i) => {
    const toolset = section(item);
    if (typeof toolset?.module === 'string') toolset.module = expandPath(toolset.module, where(`customToolsets[${i}].module`), baseDir);
  });
}
