import type { ApiResponse } from '../../../workers/openapi/api-client';
import { responseToResult } from '../../../workers/openapi/results';

const response = (status: number, type: string, body: Buffer | string, more: Partial<ApiResponse> = {}): ApiResponse => ({ status, method: 'GET', headers: type ? { 'content-type': type } : {}, body: Buffer.from(body), truncated: false, url: 'http://x/', ...more });
const textOf = (result: { content: Array<{ type: string; text?: string }> }, item = 0) => result.content[item].text;

describe('results', () => {
  test('say that a body labelled JSON is not valid JSON, keeping its text', () => {
    const result = responseToResult(response(200, 'application/json; charset=utf-8', '{"id": 1, oops'));
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toBeUndefined();
    expect(textOf(result)).toMatch(/^\{"id": 1, oops\n\[not valid JSON although the response says application\/json: .+\]$/);
    // An untyped body that only looks like JSON is text, as before.
    expect(textOf(responseToResult(response(200, '', '{not json')))).toBe('{not json');
  });
});
