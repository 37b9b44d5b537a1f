import { viewSchema } from '../../../workers/openapi/schema-view';
import type { Json, RefContext } from '../../../workers/openapi/refs';

const WIDE = { depth: 8, descriptionChars: 200, maxChars: 10_000 };

describe('viewSchema', () => {
  test('shows a $ref\'s sibling keywords in the terms of the document the $ref is written in, and its target in its own', () => {
    const ctx: RefContext = {
      root: { openapi: '3.1.0', paths: {}, components: { schemas: { Count: { type: 'integer' } } } },
      rootUri: 'file:///spec/api.yaml',
      external: new Map<string, Json>([['file:///spec/models/base.yaml', { Base: { type: 'object', properties: { kind: { $ref: '#/Kind' } } }, Kind: { type: 'string', enum: ['a', 'b'] } }]]),
    };
    // OpenAPI 3.1: keywords beside a $ref apply with it; this one's ref is the root's component.
    const schema = { $ref: 'models/base.yaml#/Base', additionalProperties: { $ref: '#/components/schemas/Count' } };
    expect(viewSchema(schema, ctx, WIDE)?.value).toEqual({ type: 'object', properties: { kind: { type: 'string', enum: ['a', 'b'] } }, additionalProperties: { type: 'integer' } });
  });
});
