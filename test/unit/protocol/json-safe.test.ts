import { unserialisableAt } from '../../../protocol/json-safe';

describe('unserialisableAt', () => {
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const shared = { x: 1 };

  it.each([
    ['a plain result', { content: [{ type: 'text', text: 'a' }], structuredContent: { n: 1, list: [1, 'b', null] } }, undefined],
    ['one object referenced twice, which JSON writes twice', { a: shared, b: [shared, shared] }, undefined],
    ['a Date and a Buffer, written by their toJSON', { at: new Date(0), bytes: Buffer.from('a') }, undefined],
    ['a BigInt', { structuredContent: { list: [1, 2n] } }, 'structuredContent.list.1 is a BigInt'],
    ['a cycle', { structuredContent: cycle }, 'structuredContent.self is an object that contains itself'],
    ['a BigInt result', 3n, 'the result is a BigInt'],
  ])('finds what JSON.stringify throws on: %s', (_label, value, problem) => {
    expect(unserialisableAt(value)).toBe(problem);
    let threw = false;
    try {
      JSON.stringify(value);
    } catch {
      threw = true;
    }
    expect(threw).toBe(problem !== undefined);
  });
});
