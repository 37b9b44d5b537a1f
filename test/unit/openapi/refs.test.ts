import { buildEndpointTools } from '../../../workers/openapi/tools-manager';
import { deref, DEREF_NODE_BUDGET, externalRefs, follow, shownUri, UnloadedRefError, type Json, type JsonObject, type RefContext } from '../../../workers/openapi/refs';
import { MAX_SCHEMA_CHARS } from '../../../workers/openapi/schema-budget';

/**
 * Entities as Microsoft Graph describes them: each extends a base through allOf and links to five
 * others through navigation properties, and the links form cycles. Written out, one entity is a
 * tree of ~5^8 nodes, although the description holds 9 small schemas.
 */
function graphLike(entities = 8): RefContext {
  const schemas: JsonObject = { entity: { type: 'object', properties: { id: { type: 'string' } } } };
  const paths: JsonObject = {};
  for (let i = 0; i < entities; i++) {
    const navigation: JsonObject = {};
    for (let j = 1; j <= 5; j++) navigation[`link${j}`] = { type: 'array', description: `the linked e${(i + j) % entities}s: ${'words '.repeat(30)}`, items: { $ref: `#/components/schemas/e${(i + j) % entities}` } };
    schemas[`e${i}`] = { allOf: [{ $ref: '#/components/schemas/entity' }, { type: 'object', properties: { [`name${i}`]: { type: 'string', description: `entity ${i}` }, ...navigation } }] };
    paths[`/e${i}`] = { patch: { requestBody: { content: { 'application/json': { schema: { $ref: `#/components/schemas/e${i}` } } } }, responses: { 204: { description: 'done' } } } };
  }
  return { root: { openapi: '3.0.3', info: { title: 'graph-like', version: '1' }, paths, components: { schemas } }, external: new Map() };
}

function objectsIn(node: Json | undefined): number {
  if (node === null || typeof node !== 'object') return 0;
  return 1 + (Array.isArray(node) ? node : Object.values(node)).reduce((sum: number, inner) => sum + objectsIn(inner), 0);
}

describe('deref', () => {
  test('writes out a schema within the budget whole, as without one', () => {
    const ctx = graphLike();
    // An entity's base and one level of its links: no cycle, far below the budget.
    const node = { type: 'object', properties: { base: { $ref: '#/components/schemas/entity' }, tags: { type: 'array', items: { type: 'string' } } } };
    expect(deref(node, ctx)).toEqual(deref(node, graphLike(), undefined, undefined, Infinity));
    expect(deref(node, ctx)).toEqual({ type: 'object', properties: { base: { type: 'object', properties: { id: { type: 'string' } } }, tags: { type: 'array', items: { type: 'string' } } } });
  });

  test('writes refs of cyclic entities out to the depth that fits the budget, and stubs below it', () => {
    const ctx = graphLike();
    const written = deref({ $ref: '#/components/schemas/e0' }, ctx) as JsonObject;
    expect(objectsIn(written)).toBeLessThanOrEqual(DEREF_NODE_BUDGET);
    // The entity and its links are written out: the linked entity's own properties are there.
    const own = (written.allOf as JsonObject[])[1].properties as Record<string, JsonObject>;
    expect(own.name0).toEqual({ type: 'string', description: 'entity 0' });
    const linked = ((own.link1.items as JsonObject).allOf as JsonObject[])[1].properties as Record<string, JsonObject>;
    expect(linked.name1).toEqual({ type: 'string', description: 'entity 1' });
    // Every branch is cut at the same ref depth, with a stub that says so.
    const text = JSON.stringify(written);
    expect(text).toMatch(/#\/components\/schemas\/e\d+: not written out \(nested too deep to list\)/);
  });

  test('writes a schema out the same whatever was written out before from the same description', () => {
    // s_i uses s_(i-1) twice: s8 alone is small and kept whole; s19 written out whole is 2^19 copies.
    const dag = (): RefContext => {
      const schemas: JsonObject = { s0: { type: 'string' } };
      for (let i = 1; i < 20; i++) schemas[`s${i}`] = { type: 'object', properties: { left: { $ref: `#/components/schemas/s${i - 1}` }, right: { $ref: `#/components/schemas/s${i - 1}` }, gone: { $ref: '#/components/schemas/nope' } } };
      return { root: { openapi: '3.0.3', info: { title: 'dag', version: '1' }, paths: {}, components: { schemas } }, external: new Map() };
    };
    const big = { $ref: '#/components/schemas/s19' };
    const freshProblems: string[] = [];
    const fresh = deref(big, dag(), (problem) => freshProblems.push(problem));
    const warm = dag();
    deref({ $ref: '#/components/schemas/s8' }, warm);
    const warmProblems: string[] = [];
    const again = deref(big, warm, (problem) => warmProblems.push(problem));
    expect(objectsIn(again)).toBe(objectsIn(fresh));
    expect(again).toEqual(fresh);
    expect(objectsIn(again)).toBeLessThanOrEqual(DEREF_NODE_BUDGET);
    expect(warmProblems).toEqual(freshProblems);
    expect(deref(big, warm)).toEqual(fresh);
  });

  test('reports an unresolved ref once, however many depths it tried', () => {
    const ctx = graphLike();
    const problems: string[] = [];
    deref({ type: 'object', properties: { missing: { $ref: '#/components/schemas/nope' }, entity: { $ref: '#/components/schemas/e3' } } }, ctx, (problem) => problems.push(problem));
    expect(problems).toEqual(['unresolved reference #/components/schemas/nope']);
  });

  test('reports a ref with a broken %-escape as unresolved instead of throwing, and walks a 200,000-item enum', () => {
    const problems: string[] = [];
    expect(deref({ $ref: '#/components/schemas/%E0%A4%A' }, graphLike(), (problem) => problems.push(problem))).toEqual({ description: 'unresolved reference #/components/schemas/%E0%A4%A' });
    expect(problems).toEqual(['unresolved reference #/components/schemas/%E0%A4%A']);
    const huge = { type: 'string', enum: Array.from({ length: 200_000 }, (_, i) => `v${i}`), items: { $ref: 'other.yaml#/x' } };
    expect([...externalRefs(huge, 'file:///spec/api.yaml')]).toEqual(['file:///spec/other.yaml']);
  });

  test('copies a property named __proto__ as a property, not as the copy\'s prototype', () => {
    const written = deref({ type: 'object', properties: JSON.parse('{"__proto__": {"type": "integer"}, "name": {"type": "string"}}') }, graphLike()) as JsonObject;
    const properties = written.properties as JsonObject;
    expect(Object.keys(properties)).toEqual(['__proto__', 'name']);
    expect(Object.getPrototypeOf(properties)).toBe(Object.prototype);
    expect(JSON.stringify(properties)).toBe('{"__proto__":{"type":"integer"},"name":{"type":"string"}}');
  });

  test('builds the tools of such a description, each schema within its listing budget, with one warning for all the cut ones', () => {
    const ctx = graphLike();
    const warnings: string[] = [];
    const tools = buildEndpointTools(ctx, false, 64, (message) => warnings.push(message));
    expect(tools).toHaveLength(8);
    for (const tool of tools) {
      expect(JSON.stringify(tool.inputSchema).length).toBeLessThanOrEqual(MAX_SCHEMA_CHARS);
      expect(tool.inputSchema.properties).toHaveProperty('name' + tool.path.slice(2));
    }
    const cut = warnings.filter((message) => /too large to list whole/.test(message));
    expect(cut).toHaveLength(1);
    expect(cut[0]).toMatch(/^8 input schema\(s\) too large to list whole/);
  });
});

describe('a $ref into a document that could not be loaded', () => {
  /** A description in /spec whose other.yaml loaded and whose gone.yaml did not. */
  const ctx = (): RefContext => ({
    root: { openapi: '3.0.3', paths: {}, components: { schemas: { Local: { $ref: 'other.yaml#/Chain' } } } },
    rootUri: 'file:///spec/api.yaml',
    external: new Map<string, Json>([['file:///spec/other.yaml', { Chain: { type: 'object', properties: { g: { $ref: './gone.yaml#/G' } } }, Fine: { type: 'string' } }]]),
    unloaded: new Map([['file:///spec/gone.yaml', { code: 'NOT_FOUND' as const, reason: 'file not found', shown: '/spec/gone.yaml', from: '/spec/other.yaml' }]]),
  });
  const thrown = (run: () => unknown): unknown => {
    try {
      run();
    } catch (error) {
      return error;
    }
    throw new Error('expected a throw');
  };

  test('throws where it is followed or written out, with the load\'s code, a message naming only the ref, and the where and why for the log', () => {
    for (const run of [() => follow({ $ref: 'gone.yaml#/G' }, ctx()), () => deref({ type: 'array', items: { $ref: 'gone.yaml#/G' } }, ctx())]) {
      const error = thrown(run);
      expect(error).toBeInstanceOf(UnloadedRefError);
      expect(error).toMatchObject({
        code: 'NOT_FOUND',
        ref: 'gone.yaml#/G',
        message: "$ref 'gone.yaml#/G' names a document that could not be loaded",
        logDetail: "$ref 'gone.yaml#/G' in /spec/api.yaml: /spec/gone.yaml could not be loaded (file not found)",
      });
    }
  });

  test('names the document the ref is written in when it is reached through another one', () => {
    expect(thrown(() => deref({ $ref: '#/components/schemas/Local' }, ctx()))).toMatchObject({ logDetail: "$ref './gone.yaml#/G' in /spec/other.yaml: /spec/gone.yaml could not be loaded (file not found)" });
  });

  test('throws even where the node budget would leave the ref unwritten, so what a schema needs does not hang on its size', () => {
    expect(thrown(() => deref({ type: 'object', properties: { a: { $ref: 'other.yaml#/Chain' } } }, ctx(), undefined, 'file:///spec/api.yaml', 2))).toBeInstanceOf(UnloadedRefError);
  });

  test('is no concern of refs into documents that loaded: a missing pointer there stays an unresolved reference', () => {
    const problems: string[] = [];
    expect(deref({ $ref: 'other.yaml#/Nope' }, ctx(), (problem) => problems.push(problem))).toEqual({ description: 'unresolved reference other.yaml#/Nope' });
    expect(problems).toEqual(['unresolved reference other.yaml#/Nope']);
    expect(deref({ $ref: 'other.yaml#/Fine' }, ctx())).toEqual({ type: 'string' });
  });
});

describe('shownUri', () => {
  test.each([
    ['file:///spec/a%20b/x.yaml', '/spec/a b/x.yaml'],
    ['https://user:secret@example.com/x.yaml', 'https://example.com/x.yaml'],
    ['https://example.com/x.yaml?v=1', 'https://example.com/x.yaml?v=1'],
    ['urn:example:x', 'urn:example:x'],
  ])('shows %s as %s', (given, want) => {
    expect(shownUri(given)).toBe(want);
  });
});
