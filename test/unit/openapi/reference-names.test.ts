import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { loadSpec } from '../../../workers/openapi/load-spec';
import { ToolsManager } from '../../../workers/openapi/tools-manager';

const ROOT = path.join(__dirname, '..', '..', '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'openapi');
const SCRIPT = path.join(FIXTURES, 'reference-names.mjs');

/** {toolId: name} as @ivotoby/openapi-mcp-server 1.16.1 names them (it is ESM: run as a child). */
function referenceNames(file: string, disableAbbreviation = false): Record<string, string> {
  const out = execFileSync(process.execPath, [SCRIPT, file, String(disableAbbreviation)], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] });
  return JSON.parse(out.toString('utf8')) as Record<string, string>;
}

async function ourNames(file: string, disableAbbreviation = false): Promise<Map<string, string>> {
  const spec = await loadSpec({ openApiSpec: file });
  const tools = new ToolsManager({}, spec).generateTools(disableAbbreviation);
  return new Map(tools.map((t) => [t.toolId, t.name]));
}

/** Compares: same name where the reference's name is unique; a unique, different one otherwise. */
async function compare(file: string, disableAbbreviation = false): Promise<{ same: number; deduped: number }> {
  const reference = referenceNames(file, disableAbbreviation);
  const ours = await ourNames(file, disableAbbreviation);
  expect([...ours.keys()].sort()).toEqual(Object.keys(reference).sort());
  const counts = new Map<string, number>();
  for (const name of Object.values(reference)) counts.set(name, (counts.get(name) ?? 0) + 1);
  let same = 0;
  let deduped = 0;
  const firstHolder = new Set<string>();
  for (const [id, refName] of Object.entries(reference)) {
    const name = ours.get(id)!;
    if (counts.get(refName) === 1) {
      expect({ id, name }).toEqual({ id, name: refName });
      same++;
    } else if (!firstHolder.has(refName) && name === refName) {
      firstHolder.add(refName);
      same++;
    } else {
      expect(name).not.toBe(refName);
      deduped++;
    }
  }
  expect(new Set(ours.values()).size).toBe(ours.size);
  return { same, deduped };
}

describe('tool names compared with the reference implementation', () => {
  test.each(['petstore-3.0.yaml', 'swagger-2.0.json', 'openapi-3.1.yaml'])('are the same for every operation of %s', async (file) => {
    const { deduped } = await compare(path.join(FIXTURES, file));
    expect(deduped).toBe(0);
  });

  test('keep the first duplicate and make the later ones unique (collisions.yaml)', async () => {
    const { same, deduped } = await compare(path.join(FIXTURES, 'collisions.yaml'));
    expect(deduped).toBe(2);
    expect(same).toBeGreaterThan(0);
    const ours = await ourNames(path.join(FIXTURES, 'collisions.yaml'));
    expect(ours.get('GET::users')).toBe('get-usrs');
    expect(ours.get('POST::users')).toBe('get-usrs-2');
    expect(ours.get('GET::users__all')).toBe('get-usrs-3');
  });

  test('are the same for every operation of GitHub with a unique reference name', async () => {
    const file = path.join(ROOT, 'node_modules', '@octokit', 'openapi', 'generated', 'api.github.com.json');
    const { same, deduped } = await compare(file);
    expect(same + deduped).toBe(1223);
    expect(same).toBeGreaterThan(1100);
  });

  test('are the same with disableAbbreviation on the fixtures', async () => {
    for (const file of ['petstore-3.0.yaml', 'openapi-3.1.yaml']) await compare(path.join(FIXTURES, file), true);
  });
});
