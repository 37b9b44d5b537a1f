/**
 * README.md against the code it documents: the Configuration section's table of every key and
 * its default against the zod schema, its YAML example against validateConfig, and the flags and
 * environment variables of each server command against README.md, and the source paths it names
 * against the tree. A key, flag or variable added without a line here, a default changed on one
 * side only, or a file moved, fails this test.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { parse as parseYaml } from 'yaml';
import { configSchema } from '../../../config/schema';
import { validateConfig } from '../../../config/validate';
import { mcpvisorProfile } from '../../../supervisor/cli/mcpvisor';
import { openapiProfile } from '../../../supervisor/cli/openapi-mcp-server';
import { shellProfile } from '../../../supervisor/cli/shell-mcp-server';
import { webSearchMcpProfile } from '../../../supervisor/cli/web-profile';
import { COMMON_FLAGS, SERVER_ENV, SERVER_FLAGS, type Profile } from '../../../supervisor/profile';

const README = readFileSync(path.join(__dirname, '..', '..', '..', 'README.md'), 'utf8');

/** The text of the `## title` section, up to the next `## `. */
function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README.md has no section '## ${title}'`);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

/** Rows `| \`key\` | default | … |` of the Configuration section: key → default cell. */
function documentedKeys(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of section('Configuration').split('\n')) {
    const row = /^\| `([A-Za-z.[\]]+)` \| ([^|]*) \|/.exec(line);
    if (row) rows.set(row[1], row[2].trim());
  }
  return rows;
}

/** What a default cell says: one backticked literal is a value (read as YAML); anything else, none. */
function documentedDefault(cell: string): unknown {
  const literal = /^`([^`]*)`$/.exec(cell);
  return literal ? parseYaml(literal[1]) : undefined;
}

function unwrap(schema: unknown): z.ZodType {
  let current = schema as z.ZodType;
  while ('innerType' in current.def) current = (current.def as unknown as { innerType: z.ZodType }).innerType;
  return current;
}

/** The fields each array of objects needs to parse, so that its other defaults can be read. */
const REQUIRED_ITEM_FIELDS: Record<string, Record<string, string>> = {
  apis: { apiBaseUrl: 'http://127.0.0.1/' },
  customToolsets: { name: 'x', module: 'x.js' },
};

/**
 * Every leaf key of the schema (dotted, `[]` for an array of objects, which is listed itself too)
 * with its default, `undefined` where it has none. Records and arrays of values are leaves.
 */
function schemaKeys(): Map<string, unknown> {
  const keys = new Map<string, unknown>();
  const walk = (object: z.ZodObject, prefix: string, defaults: Record<string, unknown> | undefined, given: Record<string, string> = {}) => {
    for (const [key, child] of Object.entries(object.shape)) {
      const dotted = prefix ? `${prefix}.${key}` : key;
      const inner = unwrap(child);
      const fallback = key in given ? undefined : defaults?.[key];
      if (inner instanceof z.ZodObject) {
        walk(inner, dotted, fallback as Record<string, unknown>);
      } else if (inner instanceof z.ZodArray && unwrap(inner.element) instanceof z.ZodObject) {
        keys.set(dotted, fallback);
        const item = unwrap(inner.element) as z.ZodObject;
        const required = REQUIRED_ITEM_FIELDS[key];
        if (!required) throw new Error(`${dotted}: an array of objects this test does not know; add its required fields to REQUIRED_ITEM_FIELDS`);
        walk(item, `${dotted}[]`, item.parse(required) as Record<string, unknown>, required);
      } else {
        keys.set(dotted, fallback);
      }
    }
  };
  walk(configSchema, '', configSchema.parse({}) as Record<string, unknown>);
  return keys;
}

describe("README.md's Configuration section", () => {
  const documented = documentedKeys();
  const schema = schemaKeys();

  it('lists every key of config/schema.ts, and no key the schema does not have', () => {
    expect({ inSchemaNotInReadme: [...schema.keys()].filter((key) => !documented.has(key)) }).toEqual({ inSchemaNotInReadme: [] });
    expect({ inReadmeNotInSchema: [...documented.keys()].filter((key) => !schema.has(key)) }).toEqual({ inReadmeNotInSchema: [] });
  });

  it("gives each key the schema's default, and a default only where the schema has one", () => {
    const differing = [...documented]
      .filter(([key]) => schema.has(key))
      .map(([key, cell]) => ({ key, readme: documentedDefault(cell), schema: schema.get(key) }))
      .filter(({ readme, schema: actual }) => JSON.stringify(readme) !== JSON.stringify(actual));
    expect(differing).toEqual([]);
  });

  it('has a YAML example that the schema takes as it is', () => {
    const example = /```yaml\n([\s\S]*?)```/.exec(section('Configuration'))?.[1];
    expect(example).toBeDefined();
    expect(() => validateConfig(parseYaml(example!))).not.toThrow();
  });

  it("names mcpvisor's flags and MCPVISOR_* variables exactly as the server has them", () => {
    const text = section('Configuration');
    const flagsSentence = /`mcpvisor` flags: ([^.]*)\./.exec(text)![1];
    const flags = [...flagsSentence.matchAll(/`--([a-z-]+)/g)].map((match) => match[1]);
    expect(flags.sort()).toEqual([...COMMON_FLAGS, ...mcpvisorProfile.flags].map((flag) => flag.name).sort());
    const variables = [...text.matchAll(/`(MCPVISOR_[A-Z_]+)`/g)].map((match) => match[1]);
    expect([...new Set(variables)].sort()).toEqual(SERVER_ENV.map((spec) => spec.name).sort());
  });
});

describe("README.md's set-up paragraph", () => {
  it("asks for the Node.js of package.json's engines", () => {
    const engines = (JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(`>=${/Node\.js (\d+\.\d+\.\d+) or later/.exec(README)?.[1]}`).toBe(engines);
  });
});

describe("README.md's pointers into the source", () => {
  it('name files and folders that exist', () => {
    const named = [...README.matchAll(/`((?:supervisor|protocol|workers|config|bench|test|scripts|deploy|docs)\/[A-Za-z0-9_./-]*)`/g)].map((match) => match[1]);
    expect(named.length).toBeGreaterThan(20);
    expect([...new Set(named)].filter((name) => !existsSync(path.join(__dirname, '..', '..', '..', name)))).toEqual([]);
  });
});

describe('README.md and the flags and variables of each server command', () => {
  const profiles: Profile[] = [mcpvisorProfile, openapiProfile(), shellProfile, webSearchMcpProfile()];

  it.each(profiles.map((profile) => [profile.command, profile]))('names every flag and variable of %s', (_command, profile) => {
    const missingFlags = profile.flags.map((flag) => `--${flag.name}`).filter((flag) => !new RegExp(`\`${flag}(?![a-z-])`).test(README));
    const missingVariables = profile.envVars.map((spec) => spec.name).filter((name) => !new RegExp(`\`${name}\\b`).test(README));
    expect({ missingFlags, missingVariables }).toEqual({ missingFlags: [], missingVariables: [] });
  });

  it('holds each server profile to the common server flags', () => {
    for (const profile of profiles) expect(profile.flags.map((flag) => flag.name)).toEqual(expect.arrayContaining(SERVER_FLAGS.map((flag) => flag.name)));
  });
});
