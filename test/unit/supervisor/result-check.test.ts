import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { resultProblem } from '../../../supervisor/result-check';

describe('resultProblem', () => {
  // Each verdict must be the SDK client's: its CallToolResult schema is what refuses a result.
  const cases: Array<[string, unknown, string | undefined]> = [
    ['a text result', { content: [{ type: 'text', text: 'ok' }] }, undefined],
    ['every content type, structuredContent, isError and _meta', {
      content: [
        { type: 'text', text: 'a' },
        { type: 'image', data: 'aGk=', mimeType: 'image/png' },
        { type: 'audio', data: 'aGk=', mimeType: 'audio/wav' },
        { type: 'resource_link', uri: 'file:///a', name: 'a' },
        { type: 'resource', resource: { uri: 'file:///a', text: 'a' } },
        { type: 'resource', resource: { uri: 'file:///b', blob: 'aGk=' } },
      ],
      structuredContent: { a: 1 },
      isError: false,
      _meta: { k: 1 },
    }, undefined],
    ['no content (the SDK takes it as empty)', { structuredContent: { a: 1 } }, undefined],
    ['a string', 'text', `a result must be an object with 'content', not "text"`],
    ['nothing', undefined, "a result must be an object with 'content', not missing"],
    ['content as a string', { content: 'x' }, `'content' must be an array of content items, not "x"`],
    ['a text item without text', { content: [{ type: 'text' }] }, "content[0]: a text item needs a string 'text'"],
    ['an item of another type', { content: [{ type: 'text', text: 'a' }, { type: 'html' }] }, `content[1]: 'type' must be one of text, image, audio, resource_link, resource (it is "html")`],
    ['an item named after an Object method', { content: [{ type: 'constructor' }] }, `content[0]: 'type' must be one of text, image, audio, resource_link, resource (it is "constructor")`],
    ['an image without mimeType', { content: [{ type: 'image', data: 'aGk=' }] }, "content[0]: an image item needs a string 'mimeType'"],
    ['a resource without contents', { content: [{ type: 'resource', resource: { uri: 'file:///a' } }] }, "content[0]: a resource item's 'resource' needs a string 'text' or 'blob'"],
    ['structuredContent as an array', { content: [], structuredContent: [1] }, "'structuredContent' must be an object, not an array"],
    ['isError as a string', { content: [], isError: 'yes' }, `'isError' must be a boolean, not "yes"`],
  ];

  it.each(cases)('judges %s as the SDK client does', (_label, result, problem) => {
    expect(resultProblem(result)).toBe(problem);
    expect(CallToolResultSchema.safeParse(result).success).toBe(problem === undefined);
  });
});
