import path from 'node:path';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { ApiToolService } from '../../../workers/openapi/service';

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'openapi', 'invalid-keyword-values.yaml');

describe('a keyword whose value JSON Schema cannot take', () => {
  test('is left out, so that a client compiles the schema, and the other keywords are still enforced', async () => {
    const s = await ApiToolService.create({ apiBaseUrl: 'http://127.0.0.1:9', openApiSpec: FIXTURE, specInputMethod: 'file', specCache: false });
    const tool = s.tools.find((t) => t.name === 'pick-thumbnail')!;
    expect(() => new AjvJsonSchemaValidator().getValidator(tool.inputSchema as Parameters<AjvJsonSchemaValidator['getValidator']>[0])).not.toThrow();
    expect(tool.inputSchema.properties).toMatchObject({ timecode: { type: 'string', maxLength: 12 }, form: {}, lines: { items: { type: 'string' } } });
    const properties = tool.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(properties.timecode.pattern).toBeUndefined();
    expect(properties.form.type).toBeUndefined();
    expect(properties.lines.type).toBeUndefined();
    await expect(s.handle('pick-thumbnail', { videoId: 'v', timecode: '00:00:00.000000' })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining("'timecode'") });
    await s.close();
  });
});
