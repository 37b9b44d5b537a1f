import { errorCodeOf } from '../../../protocol/results';
import type { Pool, PoolStats } from '../../../protocol/pool';
import { AnnouncedTool } from '../../../protocol/tool-text';
import type { JsonObjectSchema, ToolCall, ToolResult } from '../../../protocol/tool';
import Ajv from 'ajv/dist/2020';
import { Catalogue, describeErrors } from '../../../supervisor/catalogue';

/** A pool that answers every call with the arguments it got: what reached the pool. */
function echoPool(schemas: Record<string, JsonObjectSchema>): Pool {
  return {
    name: 'echo',
    tools: Object.entries(schemas).map(([name, inputSchema]) => AnnouncedTool.of({ name, description: name, inputSchema })),
    start: async () => undefined,
    stop: async () => undefined,
    stats: () => ({}) as PoolStats,
    call: async (call: ToolCall): Promise<ToolResult> => ({ content: [{ type: 'text', text: JSON.stringify(call.arguments) }] }),
  };
}

describe('Catalogue argument validation', () => {
  const catalogue = new Catalogue();
  catalogue.register(
    echoPool({
      // JSON Schema 2020-12, as the api worker writes it.
      tuple2020: { type: 'object', properties: { p: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false } }, required: ['p'] },
      // A draft-07 tuple, as zod-to-json-schema writes one for a custom toolset.
      tuple07: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { p: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false } }, required: ['p'] },
      // Valid in JavaScript without the u flag only.
      month: { type: 'object', properties: { m: { type: 'string', pattern: '^\\d{4}\\-\\d{2}$' } } },
      // Not compilable (a $ref to nowhere): its required arguments are still checked.
      broken: { type: 'object', properties: { a: { $ref: '#/nowhere' } }, required: ['a'] },
      // GitHub's ruleset rules: one alternative per rule type.
      rules: {
        type: 'object',
        properties: {
          rules: {
            type: 'array',
            items: {
              oneOf: [
                ...['creation', 'update', 'deletion'].map((type): Record<string, unknown> => ({ type: 'object', properties: { type: { enum: [type] } }, required: ['type'] })),
                { type: 'object', properties: { type: { enum: ['pull_request'] }, parameters: { type: 'object', properties: { count: { type: 'integer' } } } }, required: ['type'] },
              ],
            },
          },
        },
      },
    }),
    { callTimeoutMs: 1000 },
  );
  const signal = new AbortController().signal;
  const code = async (name: string, args: Record<string, unknown>) => errorCodeOf(await catalogue.call(name, args, { signal }));

  test('names the fault of the oneOf alternative the value meant, not the others\' type mismatches', async () => {
    const result = await catalogue.call('rules', { rules: [{ type: 'creation' }, { type: 'pull_request', parameters: { count: 'one' } }] }, { signal });
    expect((result.content[0] as { text: string }).text).toBe("BAD_INPUT (tool rules): invalid arguments: argument 'rules.1.parameters.count' must be integer, got the string \"one\"");
  });

  test('keeps every error outside a oneOf beside the narrowed ones', () => {
    const schema = {
      type: 'object',
      required: ['owner', 'repo'],
      properties: { owner: { type: 'string' }, repo: { type: 'string' }, body: { type: 'object', properties: { labels: { type: 'array', items: { type: 'string' } } } }, pick: { oneOf: [{ type: 'string' }, { type: 'object', properties: { n: { type: 'integer' } } }] } },
    };
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    validate({ body: { labels: [1] }, pick: { n: 'x' } });
    const message = describeErrors(validate.errors ?? []);
    expect(message).toContain("missing required argument 'owner'");
    expect(message).toContain("missing required argument 'repo'");
    expect(message).toContain("argument 'body.labels.0' must be string");
    expect(message).toContain("argument 'pick.n' must be integer");
    expect(message).not.toContain("argument 'pick' must be string");
  });

  test('enforces 2020-12 and, for schemas it refuses, draft-07', async () => {
    expect(await code('tuple2020', { p: ['a', 1] })).toBeUndefined();
    expect(await code('tuple2020', { p: ['a', 1, 2] })).toBe('BAD_INPUT');
    expect(await code('tuple07', { p: ['a', 1] })).toBeUndefined();
    expect(await code('tuple07', { p: ['a', 'b'] })).toBe('BAD_INPUT');
  });

  test('keeps patterns JavaScript compiles without the u flag', async () => {
    expect(await code('month', { m: '2024-05' })).toBeUndefined();
    expect(await code('month', { m: '2024_05' })).toBe('BAD_INPUT');
  });

  test('checks the required arguments of a schema ajv cannot compile', async () => {
    expect(await code('broken', {})).toBe('BAD_INPUT');
    expect(await code('broken', { a: 1 })).toBeUndefined();
  });
});

describe('Catalogue: a tool with thousands of arguments', () => {
  afterEach(() => jest.restoreAllMocks());

  test('compiles only the arguments a call gives, and still refuses a wrong one and a missing required one', async () => {
    const properties: Record<string, object> = {};
    for (let i = 0; i < 10_000; i++) properties[`p${i}`] = { type: 'string' };
    const catalogue = new Catalogue();
    catalogue.register(echoPool({ wide: { type: 'object', properties, required: ['p7'], additionalProperties: false } }), { callTimeoutMs: 1000 });
    const compiled: number[] = [];
    const compile = Ajv.prototype.compile;
    jest.spyOn(Ajv.prototype, 'compile').mockImplementation(function (this: Ajv, given) {
      compiled.push(Object.keys((given as JsonObjectSchema).properties ?? {}).length);
      return compile.call(this, given);
    });
    const signal = new AbortController().signal;
    const text = async (args: Record<string, unknown>) => ((await catalogue.call('wide', args, { signal })).content[0] as { text: string }).text;
    expect(JSON.parse(await text({ p7: 'a', p9999: 'b' }))).toEqual({ p7: 'a', p9999: 'b' });
    expect(await text({ p7: 'a', p1: 5 })).toMatch(/^BAD_INPUT .*'p1' must be string/);
    expect(await text({ p1: 'a' })).toMatch(/^BAD_INPUT .*missing required argument 'p7'/);
    expect(await text({ p7: 'a', nope: 1 })).toMatch(/^BAD_INPUT .*unknown argument 'nope'/);
    // Compiling the 10,000 held the supervisor ~2.5 s, every session with it.
    expect(compiled.length).toBeGreaterThan(0);
    expect(Math.max(...compiled)).toBeLessThanOrEqual(2);
    const many = Object.fromEntries(Array.from({ length: 2_001 }, (_, i) => [`p${i}`, 'x']));
    expect(await text(many)).toBe('BAD_INPUT (tool wide): more than 2000 arguments given (2001)');
  });
});

describe('Catalogue: a rate-limit wait counts against the call\'s budget', () => {
  const { validateConfig } = jest.requireActual('../../../config/validate') as typeof import('../../../config/validate');
  const { webToolsets } = jest.requireActual('../../../supervisor/toolsets/web') as typeof import('../../../supervisor/toolsets/web');
  const { createLogger } = jest.requireActual('../../../supervisor/logger') as typeof import('../../../supervisor/logger');

  /** A pool that records the deadline each call was given. */
  const recording = () => {
    const deadlines: number[] = [];
    const pool: Pool = {
      name: 'rec',
      tools: [AnnouncedTool.of({ name: 'fetch_web_content', description: 'f', inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } })],
      start: async () => undefined,
      stop: async () => undefined,
      stats: () => ({}) as PoolStats,
      call: async (_call: ToolCall, options: { deadlineMs: number }): Promise<ToolResult> => {
        deadlines.push(options.deadlineMs);
        return { content: [{ type: 'text', text: 'fetched' }] };
      },
    };
    return { pool, deadlines };
  };
  /** The web toolset's fetch hook at `rateLimit` per `rateLimitIntervalMs` (page cache off: with it on, its pager takes the tokens). */
  const fetchHook = (rateLimit: number, rateLimitIntervalMs: number) => {
    const config = validateConfig({ web: { fetch: { rateLimit, rateLimitIntervalMs, cache: { ttlMs: 0 } } } });
    return webToolsets(config, createLogger({ level: 'silent' }))[0].pools[1].beforeCall!;
  };
  const signal = new AbortController().signal;
  const url = { url: 'http://example.com/' };

  test('answers BUSY at once, waiting for no timer, when the token would come after the call\'s deadline', async () => {
    const { pool, deadlines } = recording();
    const catalogue = new Catalogue();
    // One token a minute, a 20 s budget: the second call's token is 60 s away.
    catalogue.register(pool, { callTimeoutMs: 20_000, beforeCall: fetchHook(1, 60_000) });
    expect((await catalogue.call('fetch_web_content', url, { signal })).isError).toBeFalsy();
    const second = catalogue.call('fetch_web_content', url, { signal });
    const atOnce = await Promise.race([second.then(() => true), new Promise((resolve) => setImmediate(() => resolve(false)))]);
    expect(atOnce).toBe(true);
    const result = await second;
    expect(errorCodeOf(result)).toBe('BUSY');
    expect((result.content[0] as { text: string }).text).toMatch(/^BUSY \(tool fetch_web_content\): fetch_web_content is rate limited and busy: the rate limit's next free token is \d+ ms away .*past the 20000 ms this call may wait; try again later$/);
    // Only the first call reached the pool.
    expect(deadlines).toHaveLength(1);
  });

  test('gives the pool only what the wait left of the budget', async () => {
    const { pool, deadlines } = recording();
    const catalogue = new Catalogue();
    // A token every 100 ms: the second call waits for one.
    catalogue.register(pool, { callTimeoutMs: 10_000, beforeCall: fetchHook(1, 100) });
    await catalogue.call('fetch_web_content', url, { signal });
    await catalogue.call('fetch_web_content', url, { signal });
    expect(deadlines[0]).toBeLessThanOrEqual(10_000);
    expect(deadlines[1]).toBeLessThan(deadlines[0]);
    expect(deadlines[1]).toBeGreaterThan(0);
    // Whole ms, as messages show them ("ran past its N ms deadline"), though the wait is measured finer.
    expect(deadlines.every(Number.isInteger)).toBe(true);
  });

  test('measures the wait by the time that passed when the wall clock is stepped during it (NTP, `date -s`), either way', async () => {
    const { pool, deadlines } = recording();
    const catalogue = new Catalogue();
    let stepMs = 3_600_000;
    // A hook during which the wall clock jumps; setSystemTime moves Date.now() only, not performance.now().
    const hook = async () => jest.setSystemTime(Date.now() + stepMs);
    catalogue.register(pool, { callTimeoutMs: 10_000, beforeCall: hook });
    jest.useFakeTimers();
    try {
      const ahead = await catalogue.call('fetch_web_content', url, { signal });
      stepMs = -7_200_000;
      const back = await catalogue.call('fetch_web_content', url, { signal });
      expect([errorCodeOf(ahead), errorCodeOf(back)]).toEqual([undefined, undefined]);
      // The whole budget both times: not spent by an hour ahead, not an hour more for one back.
      expect(deadlines).toEqual([10_000, 10_000]);
    } finally {
      jest.useRealTimers();
    }
  });

  test('stops a hook still waiting when the budget is spent, answering TIMEOUT', async () => {
    const { pool, deadlines } = recording();
    const catalogue = new Catalogue();
    // A hook that only its signal ends.
    const hook = (_tool: string, _args: Record<string, unknown>, hookSignal: AbortSignal) =>
      new Promise<void>((_resolve, reject) => hookSignal.addEventListener('abort', () => reject(hookSignal.reason), { once: true }));
    catalogue.register(pool, { callTimeoutMs: 200, beforeCall: hook });
    const result = await catalogue.call('fetch_web_content', url, { signal });
    expect(errorCodeOf(result)).toBe('TIMEOUT');
    expect((result.content[0] as { text: string }).text).toBe('TIMEOUT (tool fetch_web_content): the call waited its whole 200 ms budget for its turn (rate limit) and was not run');
    expect(deadlines).toEqual([]);
  }, 5_000);
});

describe('Catalogue: two toolsets listing one name', () => {
  const pool = (name: string, tools: string[]): Pool => ({ ...echoPool(Object.fromEntries(tools.map((tool) => [tool, { type: 'object' as const }]))), name });

  test('names both pools and their tools when namespaces meet (`a` + `show-pet`, `a-show` + `pet`)', () => {
    const catalogue = new Catalogue();
    catalogue.register(pool('api-a', ['show-pet']), { namespace: 'a', callTimeoutMs: 1000 });
    expect(() => catalogue.register(pool('api-a-show', ['pet']), { namespace: 'a-show', callTimeoutMs: 1000 })).toThrow(
      "two toolsets define the tool 'a-show-pet': api-a ('show-pet' in namespace 'a') and api-a-show ('pet' in namespace 'a-show'); give one of them another namespace",
    );
  });

  test('without namespaces, says to give one', () => {
    const catalogue = new Catalogue();
    catalogue.register(pool('mine', ['hello']), { callTimeoutMs: 1000 });
    expect(() => catalogue.register(pool('theirs', ['hello']), { callTimeoutMs: 1000 })).toThrow("two toolsets define the tool 'hello': mine ('hello') and theirs ('hello'); give one of them a namespace");
  });

  test('a pool refused for a clash adds none of its tools (a left-out API registered later)', () => {
    const catalogue = new Catalogue();
    catalogue.register(pool('mine', ['hello']), { callTimeoutMs: 1000 });
    expect(() => catalogue.register(pool('theirs', ['first', 'hello', 'last']), { callTimeoutMs: 1000 })).toThrow("two toolsets define the tool 'hello'");
    expect(catalogue.list().map((tool) => tool.name)).toEqual(['hello']);
  });
});
