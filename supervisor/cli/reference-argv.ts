import { parseBool, type FlagSpec } from '../../config/load';

/** The reference's one-letter flags (its yargs aliases), as long ones. `-v` is left out: it sets the server version there, and prints ours here. */
export const REFERENCE_SHORT_FLAGS: Readonly<Record<string, string>> = Object.freeze({
  '-u': '--api-base-url',
  '-s': '--openapi-spec',
  '-H': '--headers',
  '-t': '--transport',
  '-p': '--port',
  '-n': '--name',
});

const BOOLEAN_WORD = /^(true|false|1|0|yes|no|on|off)$/i;

/**
 * Command lines written for `@ivotoby/openapi-mcp-server` (its README and users' client configs)
 * in the form our parser (node:util parseArgs) reads: its short aliases become long flags, and a
 * boolean flag given a value as yargs allows (`--disable-abbreviation true`, `--debug=false`)
 * becomes the bare flag, or nothing for a false value. A flag named in `optionalValue`
 * (`--verbose`, a string there) given with no value gets `true`; a value starting with `-` that
 * is no flag is joined to its flag (`--spec-inline=---…`). Anything else passes unchanged.
 */
export function referenceArgv(argv: readonly string[], flags: readonly FlagSpec[], optionalValue: readonly string[] = []): string[] {
  const booleans = new Set(flags.filter((flag) => flag.kind === 'flag').map((flag) => `--${flag.name}`));
  const valued = new Set(flags.filter((flag) => flag.kind !== 'flag').map((flag) => `--${flag.name}`));
  const known = new Set([...booleans, ...valued, ...Object.keys(REFERENCE_SHORT_FLAGS)]);
  const optional = new Set(optionalValue.map((name) => `--${name}`));
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const long = REFERENCE_SHORT_FLAGS[arg] ?? arg;
    const eq = long.indexOf('=');
    const name = long.startsWith('--') && eq > 0 ? long.slice(0, eq) : long;
    if (booleans.has(name)) {
      const inline = eq > 0 ? long.slice(eq + 1) : undefined;
      const next = inline === undefined && i + 1 < argv.length && BOOLEAN_WORD.test(argv[i + 1]) ? argv[++i] : undefined;
      const value = inline ?? next;
      // A value that is no boolean word stays attached, for parseArgs to refuse in its own words.
      if (value !== undefined && !BOOLEAN_WORD.test(value)) out.push(long);
      else if (value === undefined || parseBool(value, name)) out.push(name);
      continue;
    }
    if (optional.has(long) && (i + 1 >= argv.length || argv[i + 1].startsWith('-'))) {
      out.push(long, 'true');
      continue;
    }
    // A value that starts with `-` but is no flag (a YAML description's `---`, given to
    // --spec-inline) is joined to its flag: parseArgs called it ambiguous. A flag stays a flag, so
    // a missing value (`--api-base-url --openapi-spec x`) is still reported as missing.
    const value = argv[i + 1];
    if (valued.has(long) && value !== undefined && value.startsWith('-') && value !== '--' && !known.has(value.split('=')[0])) {
      out.push(`${long}=${value}`);
      i++;
      continue;
    }
    out.push(long);
  }
  return out;
}
