import { compileApi, StoredTool } from '../../../workers/openapi/compiled';
import { displayText } from '../../../workers/openapi/display-text';
import type { LoadedSpec } from '../../../workers/openapi/load-spec';

describe('displayText', () => {
  test('removes terminal escapes, control characters and bidirectional overrides, and keeps the text around them', () => {
    expect(displayText('\u001b[31mred\u001b[0m plain')).toBe('red plain');
    expect(displayText('see \u001b]8;;https://evil.example\u0007docs\u001b]8;;\u001b\\ here')).toBe('see docs here');
    expect(displayText('line\roverwritten\r\nnext\tcell\u0007\u0000\u009b2J')).toBe('line\noverwritten\nnext\tcell');
    expect(displayText('abc\u202Efed\u202C \u2066x\u2069')).toBe('abcfed x');
  });

  test('keeps printable text of every script, direction marks and joiners as they are', () => {
    for (const text of ['plain', 'עברית and العربية', 'emoji 👩\u200D💻', 'mark \u200F\u200E\u061C', 'line\nbreaks\tand tabs', 'C:\\bin\\r']) expect(displayText(text)).toBe(text);
  });
});

describe('compileApi', () => {
  const hostile = '\u001b[2J\u001b[1;1HDelete nothing\u202E (safe)';
  const spec = {
    root: {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/items/{id}': {
          delete: {
            operationId: 'deleteItem',
            summary: `Remove\u001b[8m secretly`,
            description: hostile,
            parameters: [
              { name: 'id', in: 'path', required: true, description: 'the \u001b[31mid\r', schema: { type: 'string', enum: ['a\u001bb', 'c'], default: 'a\u001bb' } },
            ],
            requestBody: { content: { 'application/json': { schema: { type: 'object', title: 'T\u2066x', properties: { description: { type: 'string', description: 'why\u0008\u0008\u0008' } } } } } },
            responses: { '204': { description: 'gone' } },
          },
        },
      },
    },
    external: new Map(),
    version: '3.0.3',
    isSwagger2: false,
    source: 'test',
  } as unknown as LoadedSpec;

  test('lists titles and descriptions without escapes or overrides, and leaves enums and defaults as written', () => {
    const { api, data } = compileApi(spec, { disableAbbreviation: false, maxNameLength: 64 });
    const tool = new StoredTool(api.tools[0], data);
    const { descriptor } = tool;
    expect(descriptor.title).toBe('Remove secretly');
    expect(descriptor.description).toBe('Delete nothing (safe)');
    expect(api.tools[0].summary).toBe('Remove secretly');
    const props = descriptor.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(props.id.description).toBe("the id\n (path parameter 'id')");
    expect(props.id.enum).toEqual(['a\u001bb', 'c']);
    expect(props.id.default).toBe('a\u001bb');
    expect(JSON.stringify(descriptor.inputSchema)).not.toMatch(/\\u001b\[|\\u2066|\\b/);
    expect(JSON.stringify(descriptor.inputSchema)).toContain('why');
  });
});
