import path from 'node:path';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { ApiToolService } from '../../../workers/openapi/service';
import { normalise } from '../../../workers/openapi/normalise';
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
    // Other engines' escapes, which JavaScript reads as letters.
    { given: '\\A[a-z]+\\z', want: '^[a-z]+$' },
    { given: '\\Aa\\Z', want: '^a(?=\\n?$)' },
    { given: '\\p{XDigit}{8}', want: '[0-9a-fA-F]{8}' },
    { given: '[\\p{Alnum}_]+', want: '[a-zA-Z0-9_]+' },
    { given: '[\\p{Upper}\\p{Digit}_]+', want: '[A-Z0-9_]+' },
    { given: '[^\\p{Cntrl}]*', want: '[^\\x00-\\x1f\\x7f]*' },
    { given: '^(\\p{LD}|\\p{Punct})+$', want: '^([\\p{L}\\p{Nd}]|[!-\\/:-@\\[-`{-~])+$' },
    { given: '\\P{Alnum}', want: '[^a-zA-Z0-9]' },
    { given: '[ \\p{Han}-]', want: '[ \\p{Script=Han}-]' },
    { given: '\\p{IsLetter}', want: '\\p{Letter}' },
    { given: '[\\x{60}\\h]', want: '[\\u{60}\\t \\xa0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000]' },
  ])('writes $given with u syntax as $want, matching the same strings', ({ given, want }) => {
    expect(unicodePattern(given)).toBe(want);
    expect(() => new RegExp(want, 'u')).not.toThrow();
  });

  test.each(['(?i)^abc$', '(?!\\.)+a', '[\\p{Print}&&[^|]]+', '\\Qa.b\\E', '\\Ga', '[\\P{Alnum}x]', '\\p{InGreek}', '[^\\p\\{C\\}]*'])(
    'leaves out %s, which has no meaning with the u flag',
    (given) => {
      expect(unicodePattern(given)).toBeUndefined();
    },
  );

  test.each([
    { given: '\\A(25[0-5]|2[0-4]\\d|[0-1]?\\d?\\d)(\\.(25[0-5]|2[0-4]\\d|[0-1]?\\d?\\d)){3}\\z', matches: ['10.0.0.1'], refuses: ['A10.0.0.1z', '10.0.0.1\n'] },
    { given: '\\A[a-z]+\\Z', matches: ['abc', 'abc\n'], refuses: ['Aabc', 'abc\n\n'] },
    { given: '^[\\p{Print}]*$', matches: ['a b~'], refuses: ['é', '\t'] },
    { given: '^\\p{Han}+$', matches: ['漢字'], refuses: ['かな'] },
  ])('reads $given as the engine it was written for does', ({ given, matches, refuses }) => {
    const pattern = new RegExp(unicodePattern(given)!, 'u');
    for (const value of matches) expect(pattern.test(value)).toBe(true);
    for (const value of refuses) expect(pattern.test(value)).toBe(false);
  });
});

describe('patterns written for other engines, or contradicted by their examples', () => {
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
    expect(properties.id.pattern).toBe('[0-9a-fA-F]{8}-[0-9a-fA-F]{4}');
    expect(properties.label.pattern).toBeUndefined();
    // Refused by their own examples: left out.
    for (const name of ['since', 'firewall', 'month', 'employer']) expect(properties[name].pattern).toBeUndefined();
    expect(properties.digest.pattern).toBe('^sha256:[a-f0-9]{64}$');
    await expect(s.handle('tag-res', { resourceArn: '\u0001', template: '{}' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining("'resourceArn'") });
    await expect(s.handle('tag-res', { resourceArn: 'arn', token: 'a+b' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining("'token'") });
    await expect(s.handle('tag-res', { resourceArn: 'arn', id: 'zz23abcd-ef01' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining("'id'") });
    await expect(s.handle('tag-res', { resourceArn: 'arn', ip: '10.0.0.256' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining("'ip'") });
    const ok = await s.handle('tag-res', {
      resourceArn: 'arn',
      token: 'a-b_c',
      template: '{"k": [1]}',
      slug: 'a-b.c',
      id: '0123abcd-ef01',
      domain: 'example.com',
      ip: '10.0.0.1',
      label: 'a|b',
      since: '2025-10-15',
      firewall: 'firewall123',
      month: '2022-10',
      employer: 'b14acd0d-75d7-4fc8-8b22-4a3924585cab',
    });
    expect(ok.isError).toBeUndefined();
    await s.close();
  });
});

describe('a pattern tested against its own example', () => {
  test('is tested under the backtracking limit, so a hostile description cannot hold the start', () => {
    // Unbounded, the first would backtrack for hours, past the test's timeout.
    expect(normalise({ type: 'string', pattern: '^(a+)+$', example: `${'a'.repeat(40)}!` })).not.toHaveProperty('pattern');
    // A pattern that needs `u` (where the limit does not apply) is not tested, and kept.
    expect(normalise({ type: 'string', pattern: '^(\\p{L}+)+$', example: `${'a'.repeat(40)}!` })).toHaveProperty('pattern', '^(\\p{L}+)+$');
  });
});
