import { acceptedTypes } from '../../../../supervisor/http/accept';

describe('acceptedTypes', () => {
  it.each([
    ['application/json, text/event-stream', { json: true, sse: true }],
    ['Application/JSON, Text/Event-Stream', { json: true, sse: true }],
    ['application/json', { json: true, sse: false }],
    ['text/event-stream', { json: false, sse: true }],
    ['*/*', { json: true, sse: true }],
    ['application/*, text/*;q=0.5', { json: true, sse: true }],
    ['application/json;q=0, text/event-stream', { json: false, sse: true }],
    ['application/json; q=0.0', { json: false, sse: false }],
    ['text/html', { json: false, sse: false }],
    ['application/jsonl', { json: false, sse: false }],
    [undefined, { json: true, sse: true }],
    ['', { json: true, sse: true }],
  ])('reads %j', (header, accepted) => {
    expect(acceptedTypes(header)).toEqual(accepted);
  });
});
