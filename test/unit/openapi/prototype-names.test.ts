import { loadSpec } from '../../../workers/openapi/load-spec';
import { buildUpstreamRequest, requestPlan } from '../../../workers/openapi/request';
import { ToolsManager } from '../../../workers/openapi/tools-manager';
import { generateToolName } from '../../../workers/openapi/tool-name';
import { ArgumentValidator } from '../../../workers/openapi/validate-args';

const BASE = 'http://127.0.0.1:8080/api/v1';
const param = (name: string, where: string) => ({ name, in: where, required: where === 'path', schema: { type: 'string' } });

// Names that Object.prototype holds: a lookup in a plain object finds them without being given.
const SPEC = {
  openapi: '3.0.3',
  info: { title: 't', version: '1' },
  paths: {
    '/proto/{constructor}': {
      post: {
        operationId: 'constructor',
        parameters: [param('__proto__', 'query'), param('constructor', 'path'), param('toString', 'query'), param('hasOwnProperty', 'header'), param('valueOf', 'cookie')],
        requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { isPrototypeOf: { type: 'string' }, propertyIsEnumerable: { type: 'string' } } } } } },
        responses: { 200: { description: 'ok' } },
      },
    },
    '/whole/{__proto__}': { get: { parameters: [param('__proto__', 'path')], responses: { 200: { description: 'ok' } } } },
  },
};

async function tool() {
  const spec = await loadSpec({ specInputMethod: 'inline', openApiSpec: JSON.stringify(SPEC) });
  const warnings: string[] = [];
  const tools = new ToolsManager({}, spec).generateTools(false, { warn: (message) => warnings.push(message) });
  return { spec, tool: tools[0], tools, warnings };
}

describe('names that Object.prototype holds (constructor, toString, __proto__, …)', () => {
  test('are arguments under their own names, and the tool of operationId constructor is called constructor', async () => {
    const { tool: t } = await tool();
    expect(t.name).toBe('constructor');
    expect(generateToolName('hasOwnProperty')).toBe('has-own-property');
    expect(Object.keys(t.inputSchema.properties!)).toEqual(['constructor', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', 'propertyIsEnumerable']);
  });

  test('a parameter named __proto__, which the request builder drops, is left out saying so, or its operation skipped when required', async () => {
    const { tools, warnings } = await tool();
    expect(tools.map((t) => t.toolId)).toEqual(['POST::proto__---constructor']);
    expect(warnings).toEqual(expect.arrayContaining([
      "POST /proto/{constructor}: parameter left out: query parameter '__proto__' cannot be sent (the request builder drops that name)",
      "operation skipped: GET /whole/{__proto__}: path parameter '__proto__' cannot be sent (the request builder drops that name)",
    ]));
  });

  test('send each given value in its place, and nothing for those not given', async () => {
    const { spec, tool: t } = await tool();
    const plan = requestPlan(t.entry!, spec, t.targets, t.body);
    const args = { constructor: 'B', toString: 'T', hasOwnProperty: 'H', valueOf: 'V', isPrototypeOf: 'I' } as Record<string, unknown>;
    const req = buildUpstreamRequest(plan, args, BASE);
    expect(req.url).toBe(`${BASE}/proto/B?toString=T`);
    expect(req.headers.hasownproperty).toBe('H');
    expect(req.headers.cookie).toBe('valueOf=V');
    expect(JSON.parse(req.body as string)).toEqual({ isPrototypeOf: 'I' });

    const bare = buildUpstreamRequest(plan, { constructor: 'B' } as Record<string, unknown>, BASE);
    expect(bare.url).toBe(`${BASE}/proto/B`);
    expect(bare.headers.hasownproperty).toBeUndefined();
    expect(bare.headers.cookie).toBeUndefined();
  });

  test('an argument named constructor that the schema does not name is refused as unknown', () => {
    const validator = new ArgumentValidator();
    expect(() => validator.check('t', { type: 'object', properties: { id: { type: 'string' } } }, JSON.parse('{"constructor":"x"}'))).toThrow("unknown argument 'constructor'");
  });
});
