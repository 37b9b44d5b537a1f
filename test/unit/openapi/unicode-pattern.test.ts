import path from 'node:path';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { ApiToolService } from '../../../workers/openapi/service';
import { unicodePattern } from '../../../workers/openapi/unicode-pattern';
import { startUpstream, type Upstream } from '../../fixtures/openapi/upstream';

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'client-patterns.yaml');

describe('unicodePattern', () => {
  test.each([
    { given: '^[a-z]+$', want: '^[a-z]+$' },
    { given: '^\\d{4}\\-\\d{2}$', want: '^\\d{4}-\\d{2}$' },
    { given: '^[a-zA-Z0-9\\-\\_]+$', want: '^[a-zA-Z0-9\\-_]+$' },
    { given: '[^/:|\\000-\\037]+', want: '[^/:|\\x00-\\x1f]+' },
    { given: '^\\{[\\w\\s:\\{\\}\\[\\]"]*}$', want: '^\\{[\\w\\s:\\{\\}\\[\\]"]*\\}$' },
    { given: 'a{,2}', want: 'a\\{,2\\}' },
    { given: '^[\\w-.]+$', want: '^[\\w\\-.]+$' },
    { given: '(a)\\1\\8', want: '(a)\\1\\x38' },
    { given: '\\p{L}+\\:', want: '\\p{L}+:' },
  ])('writes $given with u syntax as $want, matching the same strings', ({ given, want }) => {
    expect(unicodePattern(given)).toBe(want);
    expect(() => new RegExp(want, 'u')).not.toThrow();
  });

  test.each(['(?i)^abc$', '\\p{XDigit}{8}', '[\\p{Alnum}_]+', '(?!\\.)+a'])('leaves out %s, which has no meaning with the u flag', (given) => {
    expect(unicodePattern(given)).toBeUndefined();
  });
});

describe('patterns written for other engines', () => {
  let upstream: Upstream;
  beforeAll(async () => {
    upstream = await startUpstream();
  });
  afterAll(() => upstream.close());

  test('are listed in schemas the MCP SDK client compiles, and still enforced', async () => {
    const s = await ApiToolService.create({ apiBaseUrl: upstream.url, openApiSpec: FIXTURE, specInputMethod: 'file', specCache: false });
    const tool = s.tools.find((t) => t.name === 'tag-res')!;
    // The SDK's validator compiles with the u flag, a whole schema or nothing.
    expect(() => new AjvJsonSchemaValidator().getValidator(tool.inputSchema as Parameters<AjvJsonSchemaValidator['getValidator']>[0])).not.toThrow();
    const properties = tool.inputSchema.properties as Record<string, { pattern?: string }>;
    expect(properties.token.pattern).toBe('^[a-zA-Z0-9\\-_]{2,50}$');
    expect(properties.id.pattern).toBeUndefined();
    await expect(s.handle('tag-res', { resourceArn: '\u0001', template: '{}' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining("'resourceArn'") });
    await expect(s.handle('tag-res', { resourceArn: 'arn', token: 'a+b' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining("'token'") });
    const ok = await s.handle('tag-res', { resourceArn: 'arn', token: 'a-b_c', template: '{"k": [1]}', slug: 'a-b.c', id: '0123abcd-ef01' });
    expect(ok.isError).toBeUndefined();
    await s.close();
  });
});
