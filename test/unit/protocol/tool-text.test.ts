import { AnnouncedTool, announcedTools, asciiJson, ToolTextsBuilder } from '../../../protocol/tool-text';

const descriptor = (name: string, description = `the ${name} tool`) => ({ name, description, inputSchema: { type: 'object' as const, properties: { q: { type: 'string' } } } });

describe('tool texts', () => {
  it('round-trips descriptors through a builder: names, spans and lazily parsed descriptors', () => {
    const builder = new ToolTextsBuilder();
    const all = [descriptor('alpha'), descriptor('beta', 'naïve “quotes” \u2028 and "escapes"'), descriptor('gamma')];
    for (const tool of all) builder.add(tool.name, asciiJson(tool));
    const texts = builder.build();
    expect(/[^\x00-\x7f]/.test(texts.text)).toBe(false);
    expect(JSON.parse(`[${texts.text}]`)).toEqual(all);
    const announced = announcedTools(texts);
    expect(announced.map((tool) => tool.name)).toEqual(['alpha', 'beta', 'gamma']);
    expect(announced.map((tool) => tool.descriptor)).toEqual(all);
  });

  it('renames a tool by editing its text, keeping everything else', () => {
    const tool = announcedTools([descriptor('search')])[0];
    const renamed = tool.renamed('web-search');
    expect(renamed.name).toBe('web-search');
    expect(JSON.parse(renamed.json)).toEqual({ ...descriptor('search'), name: 'web-search' });
    expect(renamed.descriptor.name).toBe('web-search');
    expect(new AnnouncedTool('x', asciiJson(descriptor('x'))).renamed('ns-x').descriptor).toEqual({ ...descriptor('x'), name: 'ns-x' });
  });

  it.each([
    ['spans of another length than the names', { text: asciiJson(descriptor('a')), names: ['a'], spans: [0] }],
    ['a span past the text', { text: asciiJson(descriptor('a')), names: ['a'], spans: [0, 10_000] }],
    ['a span not starting with its own name', { text: asciiJson(descriptor('a')), names: ['b'], spans: [0, asciiJson(descriptor('a')).length] }],
    ['spans out of order', { text: `${asciiJson(descriptor('a'))},${asciiJson(descriptor('a'))}`, names: ['a', 'a'], spans: [asciiJson(descriptor('a')).length + 1, 2 * asciiJson(descriptor('a')).length + 1, 0, asciiJson(descriptor('a')).length] }],
    ['no text', { names: [], spans: [] }],
  ])('refuses a malformed list: %s', (_case, texts) => {
    expect(() => announcedTools(texts as never)).toThrow(/malformed tool list/);
  });
});
