import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, validateConfig, type Config, type ConfigInput } from './validate';
import { didYouMean } from './suggest';
import { duplicateJsonKey } from './json-duplicates';
import { HEADER_NAME } from '../protocol/http-headers';
import { expandPath, expandPathKeys } from './paths';
import { Origins } from './origins';
import { describeOpenError } from '../protocol/access-denied';
import { FileRefusedError, readRegularFileSync } from '../protocol/regular-file';
import { MAX_SPEC_BYTES } from '../workers/openapi/spec-limits';

/** Biggest config file read, bytes: as big as a description, which a config may hold inline. */
export const MAX_CONFIG_BYTES = MAX_SPEC_BYTES;

export type ValueKind = 'string' | 'int' | 'bool' | 'list' | 'headers';

/**
 * A command-line flag and the config field it sets. `path` is dotted (`http.port`); with `apply`,
 * it names the field `apply` sets, for messages (`--api-base-url (apis[0].apiBaseUrl): …`).
 */
export interface FlagSpec {
  name: string;
  kind: ValueKind | 'flag';
  path?: string;
  /** Repeatable flags collect into an array (`--tag a --tag b`). */
  multiple?: boolean;
  /** Called instead of setting `path` (for flags that need a rule of their own). */
  apply?: (input: ConfigInput, value: unknown) => void;
  help: string;
  arg?: string;
}

/** An environment variable and the config field it sets (`path`: as FlagSpec's). */
export interface EnvSpec {
  name: string;
  kind: ValueKind;
  path?: string;
  apply?: (input: ConfigInput, value: unknown) => void;
}

export interface LoadOptions {
  argv: string[];
  env: NodeJS.ProcessEnv;
  flags: FlagSpec[];
  envVars: EnvSpec[];
  /** The profile's own defaults, below the config file. */
  defaults?: ConfigInput;
  /** Variables with this prefix must be known (catches typos such as MCPVISOR_PROT). */
  envPrefix?: string;
  /** Positional arguments allowed (web-search's sub-commands). */
  allowPositionals?: boolean;
  /** An environment variable naming the config file when `--config` is not given. */
  configEnv?: string;
  /**
   * Top-level keys whose arrays later layers merge into item by item instead of replacing
   * (`apis`: openapi-mcp-server's flags complete the config file's API, see its profile).
   */
  mergeByIndex?: string[];
}

export interface Loaded {
  config: Config;
  positionals: string[];
  help: boolean;
  version: boolean;
  /** Where each layer came from, for the debug log. */
  sources: string[];
  /** Absolute path of the config file read, if any (the shell sandbox keeps it read-only). */
  file?: string;
  /** Where each value came from, for messages of later checks (a profile's finalize). */
  origins: Origins;
}

/**
 * Builds the configuration from its layers, later overriding earlier: defaults < profile defaults
 * < config file (`--config`) < environment < command line. Throws `ConfigError` for an unknown
 * flag or `PREFIX_*` variable (with a suggestion), a value of the wrong type, or an invalid result.
 */
export function loadConfig(options: LoadOptions): Loaded {
  const { values, positionals } = parseFlags(options);
  const sources = ['defaults'];
  let input: ConfigInput = structuredClone(options.defaults ?? {});
  if (options.defaults) sources.push('profile');
  const origins = new Origins();
  for (const spec of options.flags) if (spec.path) origins.canGive(spec.path, `--${spec.name}`);
  for (const spec of options.envVars) if (spec.path) origins.canGive(spec.path, spec.name);

  // `--config ""` (a `--config "$FILE"` with FILE unset) started on the defaults, shell and all,
  // as if no file had been meant; an empty MCPVISOR_CONFIG is unset, as every empty variable.
  if (typeof values.config === 'string' && values.config.trim() === '') throw new ConfigError('--config: expected a file path, got an empty value');
  const given = (values.config as string | undefined) ?? (options.configEnv ? options.env[options.configEnv] || undefined : undefined);
  // `MCPVISOR_CONFIG=~/mcpvisor.yaml` in pm2's env, or `--config=~/x`: no shell expanded it.
  const file = given === undefined ? undefined : expandPath(given, values.config !== undefined ? '--config' : String(options.configEnv));
  if (file) {
    let data: ConfigInput;
    try {
      data = readConfigFile(file);
    } catch (error) {
      // Named as given when it came from the environment: pm2's env, a unit file's Environment=.
      if (error instanceof ConfigError && values.config === undefined) throw new ConfigError(`${String(options.configEnv)}: ${error.message}`);
      throw error;
    }
    origins.setTree([], data, path.resolve(file));
    input = mergeLayer(input, data, options.mergeByIndex);
    sources.push(`file ${file}`);
  }

  const fromEnv: ConfigInput = {};
  checkEnvPrefix(options);
  for (const spec of options.envVars) {
    const raw = options.env[spec.name];
    if (raw === undefined || raw === '') continue;
    assign(fromEnv, spec, convert(raw, spec.kind, spec.name));
    if (spec.path) origins.set(spec.path, spec.name);
  }
  // Paths given here are relative to the current directory; a `~` is the home directory.
  expandPathKeys(fromEnv as Record<string, unknown>, (key) => envNaming(options.envVars, key));
  input = mergeLayer(input, fromEnv, options.mergeByIndex);
  if (Object.keys(fromEnv).length > 0) sources.push('environment');

  const fromFlags: ConfigInput = {};
  for (const spec of options.flags) {
    const raw = values[spec.name];
    if (raw === undefined || spec.name === 'config' || spec.name === 'help' || spec.name === 'version') continue;
    const value = spec.kind === 'flag'
      ? raw
      : Array.isArray(raw)
        ? raw.flatMap((item) => asArray(convert(item, spec.kind as ValueKind, `--${spec.name}`)))
        : convert(raw as string, spec.kind, `--${spec.name}`);
    assign(fromFlags, spec, value);
    if (spec.path) origins.set(spec.path, `--${spec.name}`);
  }
  expandPathKeys(fromFlags as Record<string, unknown>, (key) => flagNaming(options.flags, key));
  input = mergeLayer(input, fromFlags, options.mergeByIndex);
  if (Object.keys(fromFlags).length > 0) sources.push('command line');

  const wantsHelp = values.help === true;
  const wantsVersion = values.version === true;
  const config = wantsHelp || wantsVersion ? validateConfig({}) : validateConfig(input, origins);
  return { config, positionals, help: wantsHelp, version: wantsVersion, sources, origins, ...(file ? { file: path.resolve(file) } : {}) };
}

/** `apis[0].specCache` → `--spec-cache`, the flag that sets it, for messages; else the key. */
function flagNaming(flags: FlagSpec[], key: string): string {
  const flag = flags.find((spec) => spec.path !== undefined && userPath(spec.path) === key);
  return flag ? `--${flag.name} (${key})` : key;
}

function envNaming(envVars: EnvSpec[], key: string): string {
  const names = envVars.filter((spec) => spec.path !== undefined && userPath(spec.path) === key).map((spec) => spec.name);
  return names.length > 0 ? `${names.join(' or ')} (${key})` : key;
}

function userPath(dotted: string): string {
  return dotted.replace(/\.(\d+)(?=\.|$)/g, '[$1]');
}

/**
 * Reads a JSON or YAML config file; `.json` is JSON, anything else is parsed as YAML (a superset).
 * Throws ConfigError for a file that cannot be read, is not a regular file (a FIFO, /dev/zero) or
 * is larger than MAX_CONFIG_BYTES, and for one that does not parse.
 */
export function readConfigFile(file: string): ConfigInput {
  let text: string;
  try {
    text = readRegularFileSync(file, MAX_CONFIG_BYTES);
  } catch (error) {
    if (error instanceof FileRefusedError) throw new ConfigError(`config file ${file} ${error.message}`);
    throw new ConfigError(`cannot read config file ${file}: ${describeOpenError(file, error)}`);
  }
  let data: unknown;
  try {
    data = path.extname(file).toLowerCase() === '.json' ? JSON.parse(text) : (require('yaml') as typeof import('yaml')).parse(text);
  } catch (error) {
    throw new ConfigError(`config file ${file} is not valid ${path.extname(file) === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message}`);
  }
  // As YAML's parser does: a key given twice is a mistake, and JSON.parse kept the last silently.
  const duplicate = path.extname(file).toLowerCase() === '.json' ? duplicateJsonKey(text) : undefined;
  if (duplicate !== undefined) throw new ConfigError(`config file ${file} gives ${duplicate} twice; give each setting once`);
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data)) throw new ConfigError(`config file ${file} must hold an object at the top level`);
  // Every path key is relative to the file, so that a config travels with what it names and means
  // the same under pm2, whose working directory is its own; `~/` is the home directory.
  const absolute = path.resolve(file);
  expandPathKeys(data as Record<string, unknown>, (key) => `${key} in ${absolute}`, path.dirname(absolute));
  return data as ConfigInput;
}

function parseFlags(options: LoadOptions): { values: Record<string, unknown>; positionals: string[] } {
  const spec: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {};
  for (const flag of options.flags) spec[flag.name] = { type: flag.kind === 'flag' ? 'boolean' : 'string', multiple: flag.multiple === true };
  try {
    const parsed = parseArgs({ args: options.argv, options: spec, strict: true, allowPositionals: options.allowPositionals ?? false });
    return { values: parsed.values as Record<string, unknown>, positionals: parsed.positionals };
  } catch (error) {
    const message = (error as Error).message;
    const unknown = /Unknown option '(-{1,2}[^']+)'/.exec(message)?.[1];
    if (unknown) {
      const names = options.flags.map((flag) => `--${flag.name}`);
      throw new ConfigError(`unknown option ${unknown}${didYouMean(unknown, names)}; see --help`);
    }
    const positional = /Unexpected argument '([^']+)'/.exec(message)?.[1];
    if (positional) throw new ConfigError(`unexpected argument '${positional}'; see --help`);
    // node's own words ("Option '--port <value>' argument missing") named the flag as its parser does.
    const arg = (name: string) => options.flags.find((flag) => `--${flag.name}` === name)?.arg ?? 'VALUE';
    const missing = /Option '(--[^' ]+) <value>' argument missing/.exec(message)?.[1];
    if (missing) throw new ConfigError(`${missing}: expected a value (${arg(missing)}), got none; see --help`);
    const ambiguous = /Option '(--[^']+)' argument is ambiguous/.exec(message)?.[1];
    if (ambiguous) throw new ConfigError(`${ambiguous}: expected a value (${arg(ambiguous)}), got an option; a value that starts with '-' is given as ${ambiguous}=VALUE`);
    const valued = /Option '(--[^']+)' does not take an argument/.exec(message)?.[1];
    if (valued) throw new ConfigError(`${valued} takes no value: give it alone; see --help`);
    throw new ConfigError(message.replace(/\s+To specify.*$/s, ''));
  }
}

function checkEnvPrefix(options: LoadOptions): void {
  if (!options.envPrefix) return;
  const known = options.envVars.map((spec) => spec.name);
  for (const name of Object.keys(options.env)) {
    if (name.startsWith(options.envPrefix) && !known.includes(name)) {
      throw new ConfigError(`unknown environment variable ${name}${didYouMean(name, known)}`);
    }
  }
}

function convert(raw: string, kind: ValueKind, source: string): unknown {
  switch (kind) {
    case 'string':
      return raw;
    case 'int': {
      if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${source}: expected an integer, got '${raw}'`);
      return Number(raw.trim());
    }
    case 'bool':
      return parseBool(raw, source);
    case 'list':
      return raw.split(',').map((item) => item.trim()).filter(Boolean);
    case 'headers':
      return parseHeaderList(raw, source);
  }
}

/** `true`/`false` (also 1/0, yes/no, on/off, any case); anything else is a ConfigError naming `source`. */
export function parseBool(raw: string, source: string): boolean {
  const lower = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(lower)) return true;
  if (['false', '0', 'no', 'off'].includes(lower)) return false;
  throw new ConfigError(`${source}: expected true or false, got '${raw}'`);
}

/** `Name:value,Other:value` (spec 000's --headers and API_HEADERS); values may hold colons. */
export function parseHeaderList(raw: string, source: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of raw.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf(':');
    const name = at > 0 ? pair.slice(0, at).trim() : '';
    if (!HEADER_NAME.test(name)) {
      throw new ConfigError(`${source}: expected Name:value pairs separated by commas; ${headerHint(pair, ':')}`);
    }
    headers[name] = pair.slice(at + 1).trim();
  }
  return headers;
}

/**
 * What was wrong with one `Name<separator>value` entry, without its value (it is often a secret):
 * only the text before the first separator-like character is shown.
 */
export function headerHint(entry: string, separator: ':' | '='): string {
  const other = separator === ':' ? '=' : ':';
  // Without any separator the whole entry may be a bare token: nothing of it is shown.
  if (!entry.includes(separator) && !entry.includes(other)) return `an entry has no '${separator}' between a header name and its value`;
  // Shown only when it reads like a header name (letters and hyphens): a token with `=` padding
  // would otherwise show up to its padding.
  const name = entry.trim().split(/[:=\s]/)[0];
  const shown = /^[A-Za-z]+(-[A-Za-z]+)*$/.test(name) ? `'${name}'` : 'an entry';
  const swapped = entry.includes(other) && !entry.includes(separator) ? ` (separate name and value with '${separator}', not '${other}')` : '';
  return name === '' ? `an entry has no header name before '${separator}'${swapped}` : `${shown} is not followed by '${separator}' and a value, or is not a header name${swapped}`;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

function assign(target: ConfigInput, spec: { path?: string; apply?: (input: ConfigInput, value: unknown) => void }, value: unknown): void {
  if (spec.apply) return spec.apply(target, value);
  if (!spec.path) return;
  setPath(target as Record<string, unknown>, spec.path, value);
}

/** Sets a dotted path, creating objects on the way. */
export function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
}

/**
 * Deep merge of plain objects; arrays and scalars of `over` replace those of `base`. Every key is
 * an own property of the result, `__proto__` too: assigned, a config file's `__proto__` section
 * became the merged object's prototype, lost at the next layer instead of refused as unknown.
 */
export function merge(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    Object.defineProperty(out, key, { value: merge(Object.hasOwn(out, key) ? out[key] : undefined, value), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** One layer over the ones below: `merge`, except that the arrays of `byIndex` keys merge item by item. */
function mergeLayer(base: ConfigInput, over: ConfigInput, byIndex: string[] = []): ConfigInput {
  const out = merge(base, over) as Record<string, unknown>;
  for (const key of byIndex) {
    const below = (base as Record<string, unknown>)[key];
    const above = (over as Record<string, unknown>)[key];
    if (Array.isArray(below) && Array.isArray(above)) out[key] = [...above.map((item, i) => merge(below[i], item)), ...below.slice(above.length)];
  }
  return out as ConfigInput;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
